package otelmetrics_test

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/go-chi/chi/v5"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// wantLimitPoints fails the test unless the reader's limit gauges hold
// exactly the points of want (name{attrs} -> value).
func wantLimitPoints(t *testing.T, reader *sdkmetric.ManualReader, when string, want ...string) {
	t.Helper()
	points, _ := collect(t, reader)
	got := lines(only(points, "ratekeeper.configured_limit"), only(points, "ratekeeper.effective_limit"))
	if w := lines(want...); got != w {
		t.Errorf("%s: limit gauges\n%s\nwant\n%s", when, got, w)
	}
}

// TestRebuiltMiddlewareClose: an application rebuilds its middleware
// rather than reloading it: old has policies a and b, its replacement m
// has a (another limit) and c, both given one Observer (WithObserver
// gives each its own ForMiddleware). Once old
// is closed, each point reflects m alone: a at m's 20, c at 7, and no b,
// a limit nobody enforces any more. A limit old set last before its Close
// (its adaptive Controller) and a reload of old dropping a while it was
// live leave a to m.
func TestRebuiltMiddlewareClose(t *testing.T) {
	obs, reader := newObserver(t)
	mem := memStore(t)
	old := middleware.MustNew(mem, []*policy.Policy{fixed("a", 10, user), fixed("b", 5, user)}, middleware.WithObserver(obs))
	m := middleware.MustNew(mem, []*policy.Policy{fixed("a", 20, user), fixed("c", 7, user)}, middleware.WithObserver(obs))
	if err := old.SetLimit("a", 8); err != nil {
		t.Fatal(err)
	}
	wantLimitPoints(t, reader, "old lowered a last",
		"ratekeeper.configured_limit{policy=a} 10",
		"ratekeeper.configured_limit{policy=b} 5",
		"ratekeeper.configured_limit{policy=c} 7",
		"ratekeeper.effective_limit{policy=a} 8",
		"ratekeeper.effective_limit{policy=b} 5",
		"ratekeeper.effective_limit{policy=c} 7")
	if err := old.SetPolicies([]*policy.Policy{fixed("b", 5, user)}); err != nil {
		t.Fatal(err)
	}
	wantLimitPoints(t, reader, "old dropped a",
		"ratekeeper.configured_limit{policy=a} 20",
		"ratekeeper.configured_limit{policy=b} 5",
		"ratekeeper.configured_limit{policy=c} 7",
		"ratekeeper.effective_limit{policy=a} 20",
		"ratekeeper.effective_limit{policy=b} 5",
		"ratekeeper.effective_limit{policy=c} 7")
	old.Close()
	r := chi.NewRouter()
	r.Use(m.Handler)
	r.Get("/", func(http.ResponseWriter, *http.Request) {})
	if code := get(r, "/", "X-User", "ann"); code != http.StatusOK {
		t.Fatalf("m: %d", code)
	}
	wantLimitPoints(t, reader, "old closed",
		"ratekeeper.configured_limit{policy=a} 20",
		"ratekeeper.configured_limit{policy=c} 7",
		"ratekeeper.effective_limit{policy=a} 20",
		"ratekeeper.effective_limit{policy=c} 7")
	runtime.KeepAlive(m) // live to the end: a middleware collected is counted out
}

// TestBindingAllocations: a request observed through the Binding
// WithObserver gives a middleware allocates no more than one observed by
// the Observer itself (wrapped, so that WithObserver installs it as is).
func TestBindingAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: AllocsPerRun runs hundreds of requests")
	}
	obs, _ := newObserver(t)
	mem := memStore(t)
	handler := func(name string, o middleware.Observer) http.Handler {
		return middleware.MustNew(mem, []*policy.Policy{fixed(name, 1_000_000, remote)}, middleware.WithObserver(o)).
			Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	}
	direct := handler("direct", struct{ middleware.Observer }{obs}) // no ForMiddleware: not bound
	bound := handler("bound", obs)
	r := httptest.NewRequest("GET", "/", nil)
	direct.ServeHTTP(httptest.NewRecorder(), r)
	bound.ServeHTTP(httptest.NewRecorder(), r)
	a, b, ok := metrictest.AllocsNoMore(200, func() { direct.ServeHTTP(httptest.NewRecorder(), r) }, func() { bound.ServeHTTP(httptest.NewRecorder(), r) })
	if !ok {
		t.Errorf("through the Binding %v allocations per request, through the Observer itself %v", b, a)
	}
}
