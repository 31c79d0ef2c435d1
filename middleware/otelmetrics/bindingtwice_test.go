package otelmetrics_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
)

// TestObserverAndItsBindingToOneMiddleware: the Observer and a Binding of
// it, two Bindings of it, or one Binding twice, given to one middleware
// counted ratekeeper.requests twice for one request; New refuses each,
// naming the Binding and the Observer. Bindings of two Observers to one
// middleware, and the Observer to one middleware with a Binding of it to
// another, stay allowed, each request counted once in each (the scenario
// metrictest.Bindings, read from ratekeeper.requests). Through chi and a
// ServeMux.
func TestObserverAndItsBindingToOneMiddleware(t *testing.T) {
	metrictest.Bindings(t, metrictest.Adapter{
		Shared:  "*otelmetrics.Observer",
		Binding: "*otelmetrics.Binding",
		New: func(t *testing.T) (middleware.Observer, func() middleware.Observer, func(*testing.T, string) float64) {
			obs, reader := newObserver(t)
			return obs, func() middleware.Observer { return obs.ForMiddleware() }, func(t *testing.T, p string) float64 {
				points, _ := collect(t, reader)
				return float64(points["ratekeeper.requests{outcome=allowed,policy="+p+"}"])
			}
		},
	})
}
