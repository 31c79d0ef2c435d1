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

// nestedCounts returns an Observer on a real SDK MeterProvider and the
// metrictest.Counts of the points its reader collects:
// ratekeeper.requests and ratekeeper.given_back.
func nestedCounts(t *testing.T) (middleware.Observer, metrictest.Counts) {
	obs, reader := newObserver(t)
	point := func(t *testing.T, series string) float64 {
		t.Helper()
		points, _ := collect(t, reader)
		v, ok := points[series]
		if !ok {
			t.Fatalf("no series %s", series)
		}
		return float64(v)
	}
	return obs, metrictest.Counts{
		Requests: func(t *testing.T, p, outcome string) float64 {
			return point(t, "ratekeeper.requests{outcome="+outcome+",policy="+p+"}")
		},
		GivenBack: func(t *testing.T, p string) float64 {
			return point(t, "ratekeeper.given_back{policy="+p+"}")
		},
	}
}

// TestNestedLoweredCopyGiveBackCountedOnce: one policy.CountIf policy
// given to two nested middlewares, the inner one's copy lowered by
// SetLimit (or a reload): three 200s whose units go back in both counted
// ratekeeper.given_back 6 under the policy, where ratekeeper.requests
// counted them allowed 3. Each counts once in each (the scenario
// metrictest.NestedLoweredGiveBack). Through chi and a ServeMux.
func TestNestedLoweredCopyGiveBackCountedOnce(t *testing.T) {
	metrictest.NestedLoweredGiveBack(t, nestedCounts)
}

// TestNestedLoweredCopyAbandonedCountedOnce: one policy given to two
// nested middlewares, the inner one's copy lowered by SetLimit (or a
// reload): a request the outer one admitted, whose context ended before
// the inner one decided, counted ratekeeper.requests allowed 1 and
// abandoned 1 under the policy, where the policy not lowered counts it
// allowed alone. It counts allowed once, abandoned never (the scenario
// metrictest.NestedLoweredAbandoned). Through chi and a ServeMux.
func TestNestedLoweredCopyAbandonedCountedOnce(t *testing.T) {
	metrictest.NestedLoweredAbandoned(t, nestedCounts)
}
