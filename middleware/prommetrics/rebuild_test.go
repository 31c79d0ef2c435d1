package prommetrics_test

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// limitFamilies returns the effective and configured limit families
// holding one series per "policy=limit" given (effective and configured
// alike) or "policy=effective/configured", as testutil compares them.
func limitFamilies(limits ...string) string {
	var eff, conf strings.Builder
	for _, l := range limits {
		name, v, _ := strings.Cut(l, "=")
		e, c, ok := strings.Cut(v, "/")
		if !ok {
			c = e
		}
		eff.WriteString(`ratekeeper_effective_limit{policy="` + name + `"} ` + e + "\n")
		conf.WriteString(`ratekeeper_configured_limit{policy="` + name + `"} ` + c + "\n")
	}
	return `
# HELP ratekeeper_configured_limit The limit configured per policy.
# TYPE ratekeeper_configured_limit gauge
` + conf.String() + `# HELP ratekeeper_effective_limit The limit enforced per policy, after adaptive and fleet adjustments.
# TYPE ratekeeper_effective_limit gauge
` + eff.String()
}

// wantLimits fails the test unless the limit gauges of reg hold exactly
// the series of limits.
func wantLimits(t *testing.T, reg prometheus.Gatherer, when string, limits ...string) {
	t.Helper()
	if err := testutil.GatherAndCompare(reg, strings.NewReader(limitFamilies(limits...)),
		"ratekeeper_effective_limit", "ratekeeper_configured_limit"); err != nil {
		t.Errorf("%s: %v", when, err)
	}
}

// TestRebuiltMiddlewareClose: an application rebuilds its middleware
// (a change ApplyConfig cannot make in place) rather than reloading it:
// old has policies a and b, its replacement m has a (another limit) and
// c, both given one Metrics (WithObserver gives each its own
// ForMiddleware). While both are live, the gauges report the last limit
// each name was given; once old is closed, each series reflects m alone:
// a at m's 20 (not deleted, not old's value), c at 7, and no b, a limit
// nobody enforces any more.
func TestRebuiltMiddlewareClose(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	old := middleware.MustNew(mem, []*policy.Policy{fixed("a", 10, remote), fixed("b", 5, remote)}, middleware.WithObserver(metrics))
	wantLimits(t, reg, "old built", "a=10", "b=5")
	m := middleware.MustNew(mem, []*policy.Policy{fixed("a", 20, remote), fixed("c", 7, remote)}, middleware.WithObserver(metrics))
	wantLimits(t, reg, "m built, old live", "a=20", "b=5", "c=7")
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	wantLimits(t, reg, "old closed", "a=20", "c=7")

	r := chi.NewRouter()
	r.Use(m.Handler)
	r.Get("/", func(http.ResponseWriter, *http.Request) {})
	if code := serve(r); code != http.StatusOK {
		t.Fatalf("m: %d", code)
	}
	wantLimits(t, reg, "m serving", "a=20", "c=7")
	runtime.KeepAlive(m)
}

// TestRebuiltMiddlewareOldReportsLast: old, still live after m was built,
// is the last to set a's limit (an adaptive Controller fed by its last
// requests lowers it); once old is closed a reports m's limit, not the
// one of a middleware that is gone.
func TestRebuiltMiddlewareOldReportsLast(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	old := middleware.MustNew(mem, []*policy.Policy{fixed("a", 100, remote)}, middleware.WithObserver(metrics))
	m := middleware.MustNew(mem, []*policy.Policy{fixed("a", 100, remote)}, middleware.WithObserver(metrics))
	if err := old.SetLimit("a", 80); err != nil {
		t.Fatal(err)
	}
	wantLimits(t, reg, "old lowered a", "a=80/100")
	old.Close()
	wantLimits(t, reg, "old closed", "a=100")
	runtime.KeepAlive(m) // live to the end: a middleware collected is counted out
}

// TestRebuiltMiddlewareOldReloaded: old, still live, is reloaded in place
// (its reloader not yet stopped) and drops a, which m enforces: a's
// gauges stay, at m's limit. Each is given its own ForMiddleware, as an
// application that wraps the Metrics in an observer of its own does.
func TestRebuiltMiddlewareOldReloaded(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	old := middleware.MustNew(mem, []*policy.Policy{fixed("a", 10, remote), fixed("b", 5, remote)}, middleware.WithObserver(metrics.ForMiddleware()))
	m := middleware.MustNew(mem, []*policy.Policy{fixed("a", 20, remote)}, middleware.WithObserver(metrics.ForMiddleware()))
	if err := old.SetPolicies([]*policy.Policy{fixed("b", 5, remote)}); err != nil {
		t.Fatal(err)
	}
	wantLimits(t, reg, "old dropped a", "a=20", "b=5")
	runtime.KeepAlive(m)
}

// TestBindingAllocations: a request observed through the Binding
// WithObserver gives a middleware allocates no more than one observed by
// the Metrics itself (wrapped, so that WithObserver installs it as is).
func TestBindingAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: AllocsPerRun runs hundreds of requests")
	}
	_, metrics, mem := metricsAndStore(t)
	handler := func(name string, obs middleware.Observer) http.Handler {
		return middleware.MustNew(mem, []*policy.Policy{fixed(name, 1_000_000, remote)}, middleware.WithObserver(obs)).
			Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	}
	direct := handler("direct", struct{ middleware.Observer }{metrics}) // no ForMiddleware: not bound
	bound := handler("bound", metrics)
	r := httptest.NewRequest("GET", "/", nil)
	direct.ServeHTTP(httptest.NewRecorder(), r)
	bound.ServeHTTP(httptest.NewRecorder(), r)
	a, b, ok := metrictest.AllocsNoMore(200, func() { direct.ServeHTTP(httptest.NewRecorder(), r) }, func() { bound.ServeHTTP(httptest.NewRecorder(), r) })
	if !ok {
		t.Errorf("through the Binding %v allocations per request, through the Metrics itself %v", b, a)
	}
}
