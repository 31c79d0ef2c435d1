package prommetrics_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/middleware/prommetrics"
	"github.com/ratekeeper/ratekeeper/policy"
)

// The fixtures the adapters' tests share (middleware/internal/metrictest).
var (
	t0                  = metrictest.T0
	remote keyfunc.Func = metrictest.Remote
	user   keyfunc.Func = metrictest.User
	fixed               = metrictest.Fixed
)

// stepClock advances 2ms at every reading: each decision takes 2ms.
type stepClock = metrictest.StepClock

// switchable fails while down is set.
type switchable struct {
	algorithms.Store
	down atomic.Bool
}

func (s *switchable) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	if s.down.Load() {
		return nil, errors.New("redis: down")
	}
	return s.Store.Take(ctx, checks...)
}

func serve(h http.Handler, header ...string) int {
	r := httptest.NewRequest("GET", "/", nil)
	if len(header) == 2 {
		r.Header.Set(header[0], header[1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

// metricsAndStore returns a pedantic registry, Metrics registered in it,
// and a memory store at t0, closed when the test ends.
func metricsAndStore(t *testing.T) (*prometheus.Registry, *prommetrics.Metrics, *algorithms.MemoryStore) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	metrics, err := prommetrics.New(reg)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(algotest.NewClock(t0)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	return reg, metrics, mem
}

func TestMetrics(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	store := &switchable{Store: mem}
	fb, _ := algorithms.NewMemoryStore(algorithms.WithClock(algotest.NewClock(t0)))
	m := middleware.MustNew(store, []*policy.Policy{fixed("per-ip", 3, remote), fixed("per-user", 100, user)},
		middleware.WithObserver(metrics), middleware.WithClock(&stepClock{}),
		middleware.OnStoreError(middleware.FallBack(fb)), middleware.WithBreaker(0, 0))
	metrictest.KeepAlive(t, m)
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))

	for range 4 { // 3 allowed, 1 denied by per-ip
		serve(h, "X-User", "ann")
	}
	serve(h) // no user: 400
	store.down.Store(true)
	if got := testutil.ToFloat64(metrics.StateGauge("healthy")); got != 1 {
		t.Errorf("failure_state{healthy} = %v before a failure, want 1", got)
	}
	serve(h, "X-User", "bob") // fallback: allowed
	if got := testutil.ToFloat64(metrics.StateGauge("fallback")); got != 1 {
		t.Errorf("failure_state{fallback} = %v while down, want 1", got)
	}
	store.down.Store(false)
	serve(h, "X-User", "bob") // primary again: per-ip full, denied
	m.SetLimit("per-ip", 2)

	want := `
# HELP ratekeeper_requests_total Requests decided, per policy and outcome (allowed, denied, shadow_denied, abandoned).
# TYPE ratekeeper_requests_total counter
ratekeeper_requests_total{outcome="abandoned",policy="per-ip"} 0
ratekeeper_requests_total{outcome="abandoned",policy="per-user"} 0
ratekeeper_requests_total{outcome="allowed",policy="per-ip"} 4
ratekeeper_requests_total{outcome="allowed",policy="per-user"} 4
ratekeeper_requests_total{outcome="denied",policy="per-ip"} 2
ratekeeper_requests_total{outcome="denied",policy="per-user"} 0
ratekeeper_requests_total{outcome="shadow_denied",policy="per-ip"} 0
ratekeeper_requests_total{outcome="shadow_denied",policy="per-user"} 0
# HELP ratekeeper_errors_total Failures per policy and kind (store, key, cost).
# TYPE ratekeeper_errors_total counter
ratekeeper_errors_total{kind="cost",policy="per-ip"} 0
ratekeeper_errors_total{kind="cost",policy="per-user"} 0
ratekeeper_errors_total{kind="key",policy="per-ip"} 0
ratekeeper_errors_total{kind="key",policy="per-user"} 1
ratekeeper_errors_total{kind="store",policy="per-ip"} 1
ratekeeper_errors_total{kind="store",policy="per-user"} 1
# HELP ratekeeper_failure_state 1 for each failure state (open, closed, fallback) an observed middleware is in; healthy is 1 when none is failing.
# TYPE ratekeeper_failure_state gauge
ratekeeper_failure_state{state="closed"} 0
ratekeeper_failure_state{state="fallback"} 0
ratekeeper_failure_state{state="healthy"} 1
ratekeeper_failure_state{state="open"} 0
# HELP ratekeeper_effective_limit The limit enforced per policy, after adaptive and fleet adjustments.
# TYPE ratekeeper_effective_limit gauge
ratekeeper_effective_limit{policy="per-ip"} 2
ratekeeper_effective_limit{policy="per-user"} 100
# HELP ratekeeper_configured_limit The limit configured per policy.
# TYPE ratekeeper_configured_limit gauge
ratekeeper_configured_limit{policy="per-ip"} 3
ratekeeper_configured_limit{policy="per-user"} 100
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"ratekeeper_requests_total", "ratekeeper_errors_total", "ratekeeper_failure_state",
		"ratekeeper_effective_limit", "ratekeeper_configured_limit"); err != nil {
		t.Error(err)
	}

	// A real scrape: the histogram saw every decision, each 2ms long.
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, line := range []string{
		"ratekeeper_decision_seconds_count 7",
		`ratekeeper_decision_seconds_bucket{le="0.001"} 0`,
		`ratekeeper_decision_seconds_bucket{le="0.0025"} 7`,
		"ratekeeper_decision_seconds_sum 0.014",
	} {
		if !strings.Contains(string(body), line+"\n") {
			t.Errorf("/metrics lacks %q:\n%s", line, body)
		}
	}
}

func TestMetricsShadowAndOpen(t *testing.T) {
	reg := prometheus.NewRegistry()
	metrics, _ := prommetrics.New(reg, prommetrics.WithNamespace("rk"), prommetrics.WithConstLabels(prometheus.Labels{"limiter": "api"}))
	mem, _ := algorithms.NewMemoryStore(algorithms.WithClock(algotest.NewClock(t0)))
	store := &switchable{Store: mem}
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 1, remote)}, middleware.WithObserver(metrics), middleware.WithShadow(nil))
	metrictest.KeepAlive(t, m)
	h := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	serve(h)
	serve(h)
	store.down.Store(true)
	serve(h)
	want := `
# HELP rk_requests_total Requests decided, per policy and outcome (allowed, denied, shadow_denied, abandoned).
# TYPE rk_requests_total counter
rk_requests_total{limiter="api",outcome="abandoned",policy="p"} 0
rk_requests_total{limiter="api",outcome="allowed",policy="p"} 1
rk_requests_total{limiter="api",outcome="denied",policy="p"} 0
rk_requests_total{limiter="api",outcome="shadow_denied",policy="p"} 1
# HELP rk_failure_state 1 for each failure state (open, closed, fallback) an observed middleware is in; healthy is 1 when none is failing.
# TYPE rk_failure_state gauge
rk_failure_state{limiter="api",state="closed"} 0
rk_failure_state{limiter="api",state="fallback"} 0
rk_failure_state{limiter="api",state="healthy"} 0
rk_failure_state{limiter="api",state="open"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "rk_requests_total", "rk_failure_state"); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(metrics.ErrorCounter("p", "store")); got != 1 {
		t.Errorf("errors{p,store} = %v, want 1", got)
	}
	if _, err := prommetrics.New(reg, prommetrics.WithNamespace("rk"), prommetrics.WithConstLabels(prometheus.Labels{"limiter": "api"})); err == nil {
		t.Error("registering the same metrics twice succeeded")
	}
	if _, err := prommetrics.New(nil, prommetrics.WithBuckets()); err == nil {
		t.Error("WithBuckets() accepted")
	}
}

func TestMetricsAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	metrics, _ := prommetrics.New(nil)
	mem, _ := algorithms.NewMemoryStore()
	m := middleware.MustNew(mem, []*policy.Policy{fixed("p", 1_000_000, remote)})
	metrictest.KeepAlive(t, m)
	plain := m.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	obs := middleware.MustNew(mem, []*policy.Policy{fixed("q", 1_000_000, remote)}, middleware.WithObserver(metrics)).
		Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	r := httptest.NewRequest("GET", "/", nil)
	plain.ServeHTTP(httptest.NewRecorder(), r)
	obs.ServeHTTP(httptest.NewRecorder(), r)
	a, b, ok := metrictest.AllocsNoMore(100, func() { plain.ServeHTTP(httptest.NewRecorder(), r) }, func() { obs.ServeHTTP(httptest.NewRecorder(), r) })
	if !ok {
		t.Errorf("with metrics %v allocations per request, without %v", b, a)
	}
}

// BenchmarkObserved measures one allowed request through a one-policy
// middleware with and without the Prometheus observer.
func BenchmarkObserved(b *testing.B) {
	for _, withMetrics := range []bool{false, true} {
		name := "metrics=off"
		var opts []middleware.Option
		if withMetrics {
			name = "metrics=on"
			metrics, _ := prommetrics.New(nil)
			opts = append(opts, middleware.WithObserver(metrics))
		}
		b.Run(name, func(b *testing.B) {
			mem, _ := algorithms.NewMemoryStore()
			h := middleware.MustNew(mem, []*policy.Policy{fixed("p", algorithms.MaxLimit, remote)}, opts...).
				Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			r := httptest.NewRequest("GET", "/", nil)
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(httptest.NewRecorder(), r)
			}
		})
	}
}

// TestRemovedPolicyGauges: a policy dropped from the rule set (a reload)
// loses its limit gauges, which would otherwise report a limit no longer
// enforced; the remaining policy's gauges stay.
func TestRemovedPolicyGauges(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	m := middleware.MustNew(mem, []*policy.Policy{fixed("old", 3, remote), fixed("kept", 5, remote)},
		middleware.WithObserver(metrics))
	metrictest.KeepAlive(t, m)
	if n := testutil.CollectAndCount(reg, "ratekeeper_effective_limit", "ratekeeper_configured_limit"); n != 4 {
		t.Fatalf("%d limit series before the reload, want 4", n)
	}
	if err := m.SetPolicies([]*policy.Policy{m.Configured("kept")}); err != nil {
		t.Fatal(err)
	}
	want := `
# HELP ratekeeper_configured_limit The limit configured per policy.
# TYPE ratekeeper_configured_limit gauge
ratekeeper_configured_limit{policy="kept"} 5
# HELP ratekeeper_effective_limit The limit enforced per policy, after adaptive and fleet adjustments.
# TYPE ratekeeper_effective_limit gauge
ratekeeper_effective_limit{policy="kept"} 5
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "ratekeeper_effective_limit", "ratekeeper_configured_limit"); err != nil {
		t.Error(err)
	}
}
