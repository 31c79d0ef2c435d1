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

// nestedCounts returns Metrics on a pedantic registry and the
// metrictest.Counts of its scraped series: requests_total and
// given_back_total.
func nestedCounts(t *testing.T) (middleware.Observer, metrictest.Counts) {
	reg := prometheus.NewPedanticRegistry()
	metrics, err := prommetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	return metrics, metrictest.Counts{
		Requests: func(t *testing.T, p, outcome string) float64 {
			return counterValue(t, reg, "ratekeeper_requests_total", "policy", p, "outcome", outcome)
		},
		GivenBack: func(t *testing.T, p string) float64 {
			return counterValue(t, reg, "ratekeeper_given_back_total", "policy", p)
		},
	}
}

// TestNestedLoweredCopyGiveBackCountedOnce: one policy.CountIf policy
// given to two nested middlewares, the inner one's copy lowered by
// SetLimit (or a reload): three 200s whose units go back in both counted
// given_back_total 6 under the policy, where requests_total counted them
// allowed 3. Each counts once in each (the scenario
// metrictest.NestedLoweredGiveBack). Through chi and a ServeMux.
func TestNestedLoweredCopyGiveBackCountedOnce(t *testing.T) {
	metrictest.NestedLoweredGiveBack(t, nestedCounts)
}

// TestNestedLoweredCopyAbandonedCountedOnce: one policy given to two
// nested middlewares, the inner one's copy lowered by SetLimit (or a
// reload): a request the outer one admitted, whose context ended before
// the inner one decided, counted requests_total allowed 1 and abandoned 1
// under the policy, where the policy not lowered counts it allowed alone.
// It counts allowed once, abandoned never (the scenario
// metrictest.NestedLoweredAbandoned). Through chi and a ServeMux.
func TestNestedLoweredCopyAbandonedCountedOnce(t *testing.T) {
	metrictest.NestedLoweredAbandoned(t, nestedCounts)
}
