package prommetrics_test

import (
	"log/slog"
	"net/http"
	"runtime"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// sharedOptions are the ways to pass one Metrics itself (no
// ForMiddleware) to a middleware and to the one rebuilt to replace it:
// each is given the options of its case.
var sharedOptions = []struct {
	name string
	opts func(*prommetrics.Metrics) (old, m middleware.Option)
}{
	{"an Option each", func(metrics *prommetrics.Metrics) (middleware.Option, middleware.Option) {
		return middleware.WithObserver(metrics), middleware.WithObserver(metrics)
	}},
	{"one Option for both", func(metrics *prommetrics.Metrics) (middleware.Option, middleware.Option) {
		opt := middleware.WithObserver(metrics)
		return opt, opt
	}},
	{"after a LogObserver", func(metrics *prommetrics.Metrics) (middleware.Option, middleware.Option) {
		lo, err := middleware.NewLogObserver(slog.New(slog.DiscardHandler))
		if err != nil {
			panic(err)
		}
		opt := middleware.WithObserver(lo, metrics)
		return opt, opt
	}},
}

// TestMetricsPassedItselfKeptApart: the Metrics passed itself to
// WithObserver, as the package doc and the README show it, by a
// middleware (a and b) and by the one rebuilt to replace it (a at another
// limit, and c) keeps the two apart, as a ForMiddleware each does: old
// reloaded without a leaves a to m, at m's limit; old closed takes b,
// which only it had, out of the gauges and leaves m's. Through chi and a
// ServeMux alike.
func TestMetricsPassedItselfKeptApart(t *testing.T) {
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
	for _, tc := range sharedOptions {
		for _, rt := range routers {
			t.Run(tc.name+"/"+rt.name, func(t *testing.T) {
				reg, metrics, mem := metricsAndStore(t)
				oldOpt, mOpt := tc.opts(metrics)
				old := middleware.MustNew(mem, []*policy.Policy{fixed("a", 10, remote), fixed("b", 5, remote)}, oldOpt)
				m := middleware.MustNew(mem, []*policy.Policy{fixed("a", 20, remote), fixed("c", 7, remote)}, mOpt)
				h := rt.route(m)
				wantLimits(t, reg, "both built", "a=20", "b=5", "c=7")
				if err := old.SetPolicies([]*policy.Policy{old.Configured("b")}); err != nil {
					t.Fatal(err)
				}
				wantLimits(t, reg, "old reloaded without a", "a=20", "b=5", "c=7")
				if err := old.Close(); err != nil {
					t.Fatal(err)
				}
				wantLimits(t, reg, "old closed", "a=20", "c=7")
				if code := serve(h); code != http.StatusOK {
					t.Fatalf("m: %d", code)
				}
				wantLimits(t, reg, "m serving", "a=20", "c=7")
				runtime.KeepAlive(m) // live to the end: a middleware collected is counted out
			})
		}
	}
}

// TestBindingNotShared: the Metrics is a SharedObserver, and its
// ForMiddleware a *Binding that is none, so that WithObserver given a
// Binding installs it as is rather than bind it again.
func TestBindingNotShared(t *testing.T) {
	_, metrics, _ := metricsAndStore(t)
	if _, ok := middleware.Observer(metrics).(middleware.SharedObserver); !ok {
		t.Fatal("*Metrics is not a middleware.SharedObserver: WithObserver(metrics) would share its limit gauges")
	}
	b := metrics.ForMiddleware()
	if _, ok := b.(*prommetrics.Binding); !ok {
		t.Errorf("ForMiddleware returned a %T, want a *prommetrics.Binding", b)
	}
	if _, ok := b.(middleware.SharedObserver); ok {
		t.Error("a Binding is a SharedObserver: WithObserver would bind it again")
	}
}
