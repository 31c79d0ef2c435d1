package prommetrics_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// routed serves "/" through the middlewares given, the first outermost,
// under chi or a ServeMux.
func routed(router string, ms ...*middleware.Middleware) http.Handler {
	var h http.Handler = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	if router == "chi" {
		r := chi.NewRouter()
		for _, m := range ms {
			r.Use(m.Handler)
		}
		r.Get("/", h.ServeHTTP)
		return r
	}
	for i := len(ms) - 1; i >= 0; i-- {
		h = ms[i].Handler(h)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", h)
	return mux
}

// TestMetricsAndItsBindingToOneMiddleware: a Metrics and a Binding of it
// (its ForMiddleware, which an application may call itself) given to one
// middleware, or two Bindings of one Metrics, or one Binding twice, were
// two observers recording into the one Metrics: requests_total counted
// each request twice, silently, as a Metrics given twice did. New refuses
// each, naming the Binding and the Metrics. Bindings of two Metrics to
// one middleware, and a Metrics to one middleware with a Binding of it to
// another, stay allowed, each request counted once in each. Through chi
// and a ServeMux.
func TestMetricsAndItsBindingToOneMiddleware(t *testing.T) {
	refused := []struct {
		name string
		opts func(m *prommetrics.Metrics) []middleware.Option
		want []string // in the error
	}{
		{"Metrics and Binding in one option", func(m *prommetrics.Metrics) []middleware.Option {
			return []middleware.Option{middleware.WithObserver(m, m.ForMiddleware())}
		}, []string{"the *prommetrics.Binding is an observer of the *prommetrics.Metrics given too", "give the *prommetrics.Metrics alone"}},
		{"Binding then Metrics in two options", func(m *prommetrics.Metrics) []middleware.Option {
			return []middleware.Option{middleware.WithObserver(m.ForMiddleware()), middleware.WithObserver(m)}
		}, []string{"the *prommetrics.Binding is an observer of the *prommetrics.Metrics given too", "give the *prommetrics.Metrics alone"}},
		{"two Bindings", func(m *prommetrics.Metrics) []middleware.Option {
			return []middleware.Option{middleware.WithObserver(m.ForMiddleware()), middleware.WithObserver(m.ForMiddleware())}
		}, []string{"two *prommetrics.Binding of one *prommetrics.Metrics", "give one"}},
		{"one Binding twice", func(m *prommetrics.Metrics) []middleware.Option {
			b := m.ForMiddleware()
			return []middleware.Option{middleware.WithObserver(b, b)}
		}, []string{"the *prommetrics.Binding is given twice", "give it once"}},
	}
	for _, router := range []string{"chi", "ServeMux"} {
		for _, tc := range refused {
			t.Run(router+"/"+tc.name, func(t *testing.T) {
				reg, metrics, mem := metricsAndStore(t)
				m, err := middleware.New(mem, []*policy.Policy{fixed("a", 10, remote)}, tc.opts(metrics)...)
				if err != nil {
					for _, w := range tc.want {
						if !strings.Contains(err.Error(), w) {
							t.Errorf("New: %v, want an error saying %q", err, w)
						}
					}
					return
				}
				if code := serve(routed(router, m)); code != http.StatusOK {
					t.Fatalf("status %d", code)
				}
				got := counterValue(t, reg, "ratekeeper_requests_total", "policy", "a", "outcome", "allowed")
				t.Errorf(`New accepted it: one request counted requests_total{policy="a",outcome="allowed"} = %v, want New to refuse it`, got)
			})
		}

		t.Run(router+"/Bindings of two Metrics", func(t *testing.T) {
			reg1, metrics1, mem := metricsAndStore(t)
			reg2 := prometheus.NewPedanticRegistry()
			metrics2, err := prommetrics.New(reg2)
			if err != nil {
				t.Fatal(err)
			}
			m, err := middleware.New(mem, []*policy.Policy{fixed("a", 10, remote)},
				middleware.WithObserver(metrics1.ForMiddleware()), middleware.WithObserver(metrics2.ForMiddleware()))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			if code := serve(routed(router, m)); code != http.StatusOK {
				t.Fatalf("status %d", code)
			}
			for i, reg := range []prometheus.Gatherer{reg1, reg2} {
				if got := counterValue(t, reg, "ratekeeper_requests_total", "policy", "a", "outcome", "allowed"); got != 1 {
					t.Errorf(`Metrics %d: requests_total{policy="a",outcome="allowed"} = %v, want 1`, i+1, got)
				}
			}
		})

		t.Run(router+"/Metrics to one, its Binding to another", func(t *testing.T) {
			reg, metrics, mem := metricsAndStore(t)
			outer, err := middleware.New(mem, []*policy.Policy{fixed("a", 10, remote)}, middleware.WithObserver(metrics))
			if err != nil {
				t.Fatal(err)
			}
			inner, err := middleware.New(mem, []*policy.Policy{fixed("b", 10, remote)}, middleware.WithObserver(metrics.ForMiddleware()))
			if err != nil {
				t.Fatal(err)
			}
			if code := serve(routed(router, outer, inner)); code != http.StatusOK {
				t.Fatalf("status %d", code)
			}
			for _, p := range []string{"a", "b"} {
				if got := counterValue(t, reg, "ratekeeper_requests_total", "policy", p, "outcome", "allowed"); got != 1 {
					t.Errorf(`requests_total{policy=%q,outcome="allowed"} = %v, want 1`, p, got)
				}
			}
		})
	}
}
