package otelmetrics_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
)

// TestNestedLoweredCopyCountedOnce: one policy given to two nested
// middlewares, the inner one's copy lowered by SetLimit (or a reload),
// counted a request allowed twice in ratekeeper.requests, once per
// middleware, where the policy not lowered counts it once (the inner
// middleware leaves it out): lowering the limit doubled the allowed
// rate. Each request counts once, by the middleware that counted its
// units; one the lowered copy refuses counts denied too (the scenario
// metrictest.NestedLowered). Through chi and a ServeMux.
func TestNestedLoweredCopyCountedOnce(t *testing.T) {
	metrictest.NestedLowered(t, func(t *testing.T) (middleware.Observer, func(*testing.T, string, string) float64) {
		obs, reader := newObserver(t)
		return obs, func(t *testing.T, p, outcome string) float64 {
			points, _ := collect(t, reader)
			v, ok := points["ratekeeper.requests{outcome="+outcome+",policy="+p+"}"]
			if !ok {
				t.Fatalf("no series ratekeeper.requests{outcome=%s,policy=%s}", outcome, p)
			}
			return float64(v)
		}
	})
}
