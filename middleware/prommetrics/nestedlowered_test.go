package prommetrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
)

// TestNestedLoweredCopyCountedOnce: one policy given to two nested
// middlewares, the inner one's copy lowered by SetLimit (or a reload),
// counted a request allowed twice in requests_total, once per middleware,
// where the policy not lowered counts it once (the inner middleware
// leaves it out): lowering the limit doubled the allowed rate. Each
// request counts once, by the middleware that counted its units; one the
// lowered copy refuses counts denied too (the scenario
// metrictest.NestedLowered). Through chi and a ServeMux.
func TestNestedLoweredCopyCountedOnce(t *testing.T) {
	metrictest.NestedLowered(t, func(t *testing.T) (middleware.Observer, func(*testing.T, string, string) float64) {
		reg := prometheus.NewPedanticRegistry()
		metrics, err := prommetrics.New(reg)
		if err != nil {
			t.Fatal(err)
		}
		return metrics, func(t *testing.T, p, outcome string) float64 {
			return counterValue(t, reg, "ratekeeper_requests_total", "policy", p, "outcome", outcome)
		}
	})
}
