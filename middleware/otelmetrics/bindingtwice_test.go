package otelmetrics_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/otelmetrics"
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

// TestObserverAndItsBindingToOneMiddleware: prommetrics'
// TestMetricsAndItsBindingToOneMiddleware for the Observer: it and a
// Binding of it, two Bindings of it, or one Binding twice, given to one
// middleware counted ratekeeper.requests twice for one request; New
// refuses each, naming the Binding and the Observer. Bindings of two
// Observers to one middleware, and the Observer to one middleware with a
// Binding of it to another, stay allowed, each request counted once in
// each. Through chi and a ServeMux.
func TestObserverAndItsBindingToOneMiddleware(t *testing.T) {
	const allowedA = "ratekeeper.requests{outcome=allowed,policy=a}"
	refused := []struct {
		name string
		opts func(o *otelmetrics.Observer) []middleware.Option
		want []string // in the error
	}{
		{"Observer and Binding in one option", func(o *otelmetrics.Observer) []middleware.Option {
			return []middleware.Option{middleware.WithObserver(o, o.ForMiddleware())}
		}, []string{"the *otelmetrics.Binding is an observer of the *otelmetrics.Observer given too", "give the *otelmetrics.Observer alone"}},
		{"Binding then Observer in two options", func(o *otelmetrics.Observer) []middleware.Option {
			return []middleware.Option{middleware.WithObserver(o.ForMiddleware()), middleware.WithObserver(o)}
		}, []string{"the *otelmetrics.Binding is an observer of the *otelmetrics.Observer given too", "give the *otelmetrics.Observer alone"}},
		{"two Bindings", func(o *otelmetrics.Observer) []middleware.Option {
			return []middleware.Option{middleware.WithObserver(o.ForMiddleware()), middleware.WithObserver(o.ForMiddleware())}
		}, []string{"two *otelmetrics.Binding of one *otelmetrics.Observer", "give one"}},
		{"one Binding twice", func(o *otelmetrics.Observer) []middleware.Option {
			b := o.ForMiddleware()
			return []middleware.Option{middleware.WithObserver(b, b)}
		}, []string{"the *otelmetrics.Binding is given twice", "give it once"}},
	}
	for _, router := range []string{"chi", "ServeMux"} {
		for _, tc := range refused {
			t.Run(router+"/"+tc.name, func(t *testing.T) {
				obs, reader := newObserver(t)
				m, err := middleware.New(memStore(t), []*policy.Policy{fixed("a", 10, remote)}, tc.opts(obs)...)
				if err != nil {
					for _, w := range tc.want {
						if !strings.Contains(err.Error(), w) {
							t.Errorf("New: %v, want an error saying %q", err, w)
						}
					}
					return
				}
				metrictest.KeepAlive(t, m)
				if code := get(routed(router, m), "/"); code != http.StatusOK {
					t.Fatalf("status %d", code)
				}
				points, _ := collect(t, reader)
				t.Errorf("New accepted it: one request counted %s = %d, want New to refuse it", allowedA, points[allowedA])
			})
		}

		t.Run(router+"/Bindings of two Observers", func(t *testing.T) {
			obs1, reader1 := newObserver(t)
			obs2, reader2 := newObserver(t)
			m, err := middleware.New(memStore(t), []*policy.Policy{fixed("a", 10, remote)},
				middleware.WithObserver(obs1.ForMiddleware()), middleware.WithObserver(obs2.ForMiddleware()))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			metrictest.KeepAlive(t, m)
			if code := get(routed(router, m), "/"); code != http.StatusOK {
				t.Fatalf("status %d", code)
			}
			for i, reader := range []*sdkmetric.ManualReader{reader1, reader2} {
				if points, _ := collect(t, reader); points[allowedA] != 1 {
					t.Errorf("Observer %d: %s = %d, want 1", i+1, allowedA, points[allowedA])
				}
			}
		})

		t.Run(router+"/Observer to one, its Binding to another", func(t *testing.T) {
			obs, reader := newObserver(t)
			mem := memStore(t)
			outer, err := middleware.New(mem, []*policy.Policy{fixed("a", 10, remote)}, middleware.WithObserver(obs))
			if err != nil {
				t.Fatal(err)
			}
			inner, err := middleware.New(mem, []*policy.Policy{fixed("b", 10, remote)}, middleware.WithObserver(obs.ForMiddleware()))
			if err != nil {
				t.Fatal(err)
			}
			metrictest.KeepAlive(t, outer)
			metrictest.KeepAlive(t, inner)
			if code := get(routed(router, outer, inner), "/"); code != http.StatusOK {
				t.Fatalf("status %d", code)
			}
			points, _ := collect(t, reader)
			for _, p := range []string{"a", "b"} {
				if k := "ratekeeper.requests{outcome=allowed,policy=" + p + "}"; points[k] != 1 {
					t.Errorf("%s = %d, want 1", k, points[k])
				}
			}
		})
	}
}
