package metrictest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// An Adapter is what the Bindings scenario needs of a metrics adapter:
// its shared observer (the Metrics, the Observer), its Bindings
// (ForMiddleware), and a reading of what it counted.
type Adapter struct {
	// Shared and Binding are the type names the middleware's errors
	// give: "*prommetrics.Metrics" and "*prommetrics.Binding".
	Shared, Binding string
	// New returns a new shared observer, a function making a Binding of
	// it, and a function reading how many requests it counted allowed
	// under the policy named p (by the adapter's own reading of its
	// metrics).
	New func(t *testing.T) (shared middleware.Observer, bind func() middleware.Observer, allowed func(t *testing.T, p string) float64)
}

// Routed serves "/" through the middlewares given, the first outermost,
// under chi (router "chi") or a ServeMux (any other).
func Routed(router string, ms ...*middleware.Middleware) http.Handler {
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

// Bindings is the scenario of a shared observer and its Bindings given
// to middlewares, through chi and a ServeMux: the shared observer and a
// Binding of it, two Bindings of it, or one Binding twice, given to one
// middleware, would count each request twice; New must refuse each,
// naming the Binding and the shared observer. Bindings of two shared
// observers to one middleware, and the shared observer to one middleware
// with a Binding of it to another, stay allowed, each request counted
// once in each.
func Bindings(t *testing.T, a Adapter) {
	t.Helper()
	refused := []struct {
		name string
		opts func(shared middleware.Observer, bind func() middleware.Observer) []middleware.Option
		want []string // in the error
	}{
		{"shared and Binding in one option", func(s middleware.Observer, bind func() middleware.Observer) []middleware.Option {
			return []middleware.Option{middleware.WithObserver(s, bind())}
		}, []string{"the " + a.Binding + " is an observer of the " + a.Shared + " given too", "give the " + a.Shared + " alone"}},
		{"Binding then shared in two options", func(s middleware.Observer, bind func() middleware.Observer) []middleware.Option {
			return []middleware.Option{middleware.WithObserver(bind()), middleware.WithObserver(s)}
		}, []string{"the " + a.Binding + " is an observer of the " + a.Shared + " given too", "give the " + a.Shared + " alone"}},
		{"two Bindings", func(_ middleware.Observer, bind func() middleware.Observer) []middleware.Option {
			return []middleware.Option{middleware.WithObserver(bind()), middleware.WithObserver(bind())}
		}, []string{"two " + a.Binding + " of one " + a.Shared, "give one"}},
		{"one Binding twice", func(_ middleware.Observer, bind func() middleware.Observer) []middleware.Option {
			b := bind()
			return []middleware.Option{middleware.WithObserver(b, b)}
		}, []string{"the " + a.Binding + " is given twice", "give it once"}},
	}
	serve := func(t *testing.T, h http.Handler) {
		t.Helper()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		if w.Code != http.StatusOK {
			t.Fatalf("status %d", w.Code)
		}
	}
	for _, router := range []string{"chi", "ServeMux"} {
		for _, tc := range refused {
			t.Run(router+"/"+tc.name, func(t *testing.T) {
				shared, bind, allowed := a.New(t)
				m, err := middleware.New(memStore(t), []*policy.Policy{Fixed("a", 10, Remote)}, tc.opts(shared, bind)...)
				if err != nil {
					for _, w := range tc.want {
						if !strings.Contains(err.Error(), w) {
							t.Errorf("New: %v, want an error saying %q", err, w)
						}
					}
					return
				}
				KeepAlive(t, m)
				serve(t, Routed(router, m))
				t.Errorf("New accepted it: one request counted allowed under a %v times, want New to refuse it", allowed(t, "a"))
			})
		}

		t.Run(router+"/Bindings of two shared observers", func(t *testing.T) {
			_, bind1, allowed1 := a.New(t)
			_, bind2, allowed2 := a.New(t)
			m, err := middleware.New(memStore(t), []*policy.Policy{Fixed("a", 10, Remote)},
				middleware.WithObserver(bind1()), middleware.WithObserver(bind2()))
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			KeepAlive(t, m)
			serve(t, Routed(router, m))
			for i, allowed := range []func(*testing.T, string) float64{allowed1, allowed2} {
				if got := allowed(t, "a"); got != 1 {
					t.Errorf("%s %d: allowed under a %v, want 1", a.Shared, i+1, got)
				}
			}
		})

		t.Run(router+"/shared to one, its Binding to another", func(t *testing.T) {
			shared, bind, allowed := a.New(t)
			mem := memStore(t)
			outer, err := middleware.New(mem, []*policy.Policy{Fixed("a", 10, Remote)}, middleware.WithObserver(shared))
			if err != nil {
				t.Fatal(err)
			}
			inner, err := middleware.New(mem, []*policy.Policy{Fixed("b", 10, Remote)}, middleware.WithObserver(bind()))
			if err != nil {
				t.Fatal(err)
			}
			KeepAlive(t, outer)
			KeepAlive(t, inner)
			serve(t, Routed(router, outer, inner))
			for _, p := range []string{"a", "b"} {
				if got := allowed(t, p); got != 1 {
					t.Errorf("allowed under %s %v, want 1", p, got)
				}
			}
		})
	}
}

// memStore returns a memory store on a clock at T0, closed when the test
// ends.
func memStore(t *testing.T) *algorithms.MemoryStore {
	t.Helper()
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(algotest.NewClock(T0)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	return mem
}
