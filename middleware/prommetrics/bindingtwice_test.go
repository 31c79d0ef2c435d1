package prommetrics_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
)

// TestMetricsAndItsBindingToOneMiddleware: a Metrics and a Binding of it
// (its ForMiddleware, which an application may call itself) given to one
// middleware, or two Bindings of one Metrics, or one Binding twice, were
// two observers recording into the one Metrics: requests_total counted
// each request twice, silently, as a Metrics given twice did. New refuses
// each, naming the Binding and the Metrics. Bindings of two Metrics to
// one middleware, and a Metrics to one middleware with a Binding of it to
// another, stay allowed, each request counted once in each (the scenario
// metrictest.Bindings, read from requests_total). Through chi and a
// ServeMux.
func TestMetricsAndItsBindingToOneMiddleware(t *testing.T) {
	metrictest.Bindings(t, metrictest.Adapter{
		Shared:  "*prommetrics.Metrics",
		Binding: "*prommetrics.Binding",
		New: func(t *testing.T) (middleware.Observer, func() middleware.Observer, func(*testing.T, string) float64) {
			reg := prometheus.NewPedanticRegistry()
			metrics, err := prommetrics.New(reg)
			if err != nil {
				t.Fatal(err)
			}
			return metrics, func() middleware.Observer { return metrics.ForMiddleware() }, func(t *testing.T, p string) float64 {
				return counterValue(t, reg, "ratekeeper_requests_total", "policy", p, "outcome", "allowed")
			}
		},
	})
}
