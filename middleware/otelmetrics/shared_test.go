package otelmetrics_test

import (
	"log/slog"
	"net/http"
	"runtime"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/otelmetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestObserverPassedItselfKeptApart: the Observer passed itself to
// WithObserver, as the package doc and the README show it, by a
// middleware (a and b) and by the one rebuilt to replace it (a at another
// limit, and c) keeps the two apart, as a ForMiddleware each does: old
// reloaded without a leaves a to m, at m's limit; old closed takes b,
// which only it had, out of the gauges and leaves m's. With an Option
// each, one Option for both, and the Observer after a LogObserver;
// through chi and a ServeMux alike.
func TestObserverPassedItselfKeptApart(t *testing.T) {
	options := []struct {
		name string
		opts func(*otelmetrics.Observer) (old, m middleware.Option)
	}{
		{"an Option each", func(obs *otelmetrics.Observer) (middleware.Option, middleware.Option) {
			return middleware.WithObserver(obs), middleware.WithObserver(obs)
		}},
		{"one Option for both", func(obs *otelmetrics.Observer) (middleware.Option, middleware.Option) {
			opt := middleware.WithObserver(obs)
			return opt, opt
		}},
		{"after a LogObserver", func(obs *otelmetrics.Observer) (middleware.Option, middleware.Option) {
			lo, err := middleware.NewLogObserver(slog.New(slog.DiscardHandler))
			if err != nil {
				panic(err)
			}
			opt := middleware.WithObserver(lo, obs)
			return opt, opt
		}},
	}
	routers := []struct {
		name  string
		route func(*middleware.Middleware) http.Handler
	}{
		{"chi", func(m *middleware.Middleware) http.Handler {
			r := chi.NewRouter()
			r.Use(m.Handler)
			r.Get("/", func(http.ResponseWriter, *http.Request) {})
			return r
		}},
		{"ServeMux", func(m *middleware.Middleware) http.Handler {
			mux := http.NewServeMux()
			mux.Handle("GET /", m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
			return mux
		}},
	}
	for _, tc := range options {
		for _, rt := range routers {
			t.Run(tc.name+"/"+rt.name, func(t *testing.T) {
				obs, reader := newObserver(t)
				mem := memStore(t)
				oldOpt, mOpt := tc.opts(obs)
				old := middleware.MustNew(mem, []*policy.Policy{fixed("a", 10, user), fixed("b", 5, user)}, oldOpt)
				m := middleware.MustNew(mem, []*policy.Policy{fixed("a", 20, user), fixed("c", 7, user)}, mOpt)
				h := rt.route(m)
				all := []string{
					"ratekeeper.configured_limit{policy=a} 20",
					"ratekeeper.configured_limit{policy=b} 5",
					"ratekeeper.configured_limit{policy=c} 7",
					"ratekeeper.effective_limit{policy=a} 20",
					"ratekeeper.effective_limit{policy=b} 5",
					"ratekeeper.effective_limit{policy=c} 7",
				}
				mine := []string{
					"ratekeeper.configured_limit{policy=a} 20",
					"ratekeeper.configured_limit{policy=c} 7",
					"ratekeeper.effective_limit{policy=a} 20",
					"ratekeeper.effective_limit{policy=c} 7",
				}
				wantLimitPoints(t, reader, "both built", all...)
				if err := old.SetPolicies([]*policy.Policy{old.Configured("b")}); err != nil {
					t.Fatal(err)
				}
				wantLimitPoints(t, reader, "old reloaded without a", all...)
				if err := old.Close(); err != nil {
					t.Fatal(err)
				}
				wantLimitPoints(t, reader, "old closed", mine...)
				if code := get(h, "/", "X-User", "ann"); code != http.StatusOK {
					t.Fatalf("m: %d", code)
				}
				wantLimitPoints(t, reader, "m serving", mine...)
				runtime.KeepAlive(m) // live to the end: a middleware collected is counted out
			})
		}
	}
}

// TestBindingNotShared: the Observer is a SharedObserver, and its
// ForMiddleware a *Binding that is none, so that WithObserver given a
// Binding installs it as is rather than bind it again.
func TestBindingNotShared(t *testing.T) {
	obs, _ := newObserver(t)
	if _, ok := middleware.Observer(obs).(middleware.SharedObserver); !ok {
		t.Fatal("*Observer is not a middleware.SharedObserver: WithObserver(obs) would share its limit gauges")
	}
	b := obs.ForMiddleware()
	if _, ok := b.(*otelmetrics.Binding); !ok {
		t.Errorf("ForMiddleware returned a %T, want an *otelmetrics.Binding", b)
	}
	if _, ok := b.(middleware.SharedObserver); ok {
		t.Error("a Binding is a SharedObserver: WithObserver would bind it again")
	}
}
