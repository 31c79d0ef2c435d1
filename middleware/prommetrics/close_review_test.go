package prommetrics_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// limitWant is the effective and configured limit families of policy
// per-ip as given.
func limitWant(effective, configured string) string {
	return `
# HELP ratekeeper_configured_limit The limit configured per policy.
# TYPE ratekeeper_configured_limit gauge
ratekeeper_configured_limit{policy="per-ip"} ` + configured + `
# HELP ratekeeper_effective_limit The limit enforced per policy, after adaptive and fleet adjustments.
# TYPE ratekeeper_effective_limit gauge
ratekeeper_effective_limit{policy="per-ip"} ` + effective + "\n"
}

// TestClosedMiddlewareLeavesLimitGauges: a middleware driven by an
// adaptive Controller (fed by its requests) is discarded for one built
// anew, both given the Metrics itself, and closed. A request still in flight on the
// old one ends a slow, failing period: its Controller lowers the old
// middleware's limit. The new middleware enforces its configured 100,
// and its own Controller, with nothing to change, sets no limit: the
// effective_limit gauge must say 100, not the 80 of a middleware that is
// gone. Nor may the old one's rules, changed after Close (a reloader not
// yet stopped dropping per-ip), delete the new one's gauges.
func TestClosedMiddlewareLeavesLimitGauges(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	clock := algotest.NewClock(t0)
	build := func() (*middleware.Middleware, *adaptive.Controller) {
		m := middleware.MustNew(mem, []*policy.Policy{fixed("per-ip", 100, remote)}, middleware.WithObserver(metrics))
		metrictest.KeepAlive(t, m)
		ctrl, err := adaptive.New(m, adaptive.Config{Baseline: time.Millisecond, MinSamples: 1, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		return m, ctrl
	}
	old, oldCtrl := build()
	if err := testutil.GatherAndCompare(reg, strings.NewReader(limitWant("100", "100")), "ratekeeper_effective_limit", "ratekeeper_configured_limit"); err != nil {
		t.Fatalf("old middleware: %v", err)
	}
	m, _ := build()
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	r.Use(m.Handler)
	r.Get("/", func(http.ResponseWriter, *http.Request) {})
	if code := serve(r); code != http.StatusOK {
		t.Fatalf("new middleware: %d", code)
	}

	// The old middleware's last request: slow and failing, after the
	// period's end.
	oldCtrl.Observe(time.Second, http.StatusInternalServerError)
	clock.Advance(time.Minute)
	if err := oldCtrl.Evaluate(); err != nil {
		t.Fatal(err)
	}
	if got := old.Set().Policies()[0].Spec().Limit; got != 80 {
		t.Fatalf("the old Controller set %d, want 80 (the test no longer lowers the limit)", got)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(limitWant("100", "100")), "ratekeeper_effective_limit", "ratekeeper_configured_limit"); err != nil {
		t.Errorf("a limit the closed middleware set reached the gauges of the new one: %v", err)
	}
	if err := old.SetPolicies([]*policy.Policy{fixed("other", 5, remote)}); err != nil {
		t.Fatal(err)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(limitWant("100", "100")), "ratekeeper_effective_limit", "ratekeeper_configured_limit"); err != nil {
		t.Errorf("the closed middleware's new rules changed the gauges of the new one: %v", err)
	}
}

// TestCloseFallbackWithLogObserver: a middleware falling back to a memory
// store, observed by a LogObserver and the Metrics, is closed while in
// fallback: failure_state leaves fallback; the LogObserver, which is no
// CloseObserver, logs no recovery for it. A new middleware, on the same
// failing store, falling back too, is counted in fallback again: the
// gauge says what the new one is in, whatever the old one did.
func TestCloseFallbackWithLogObserver(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	down := &switchable{Store: mem}
	down.down.Store(true)
	backup, err := algorithms.NewMemoryStore(algorithms.WithClock(algotest.NewClock(t0)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { backup.Close() })
	var logged bytes.Buffer
	lo, err := middleware.NewLogObserver(slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil {
		t.Fatal(err)
	}
	build := func() *middleware.Middleware {
		return middleware.MustNew(down, []*policy.Policy{fixed("per-ip", 100, remote)},
			middleware.WithObserver(lo, metrics), middleware.OnStoreError(middleware.FallBack(backup)), middleware.WithBreaker(0, 0))
	}
	fallback := func(n int) string {
		return `
# HELP ratekeeper_failure_state 1 for each failure state (open, closed, fallback) an observed middleware is in; healthy is 1 when none is failing.
# TYPE ratekeeper_failure_state gauge
ratekeeper_failure_state{state="closed"} 0
ratekeeper_failure_state{state="fallback"} ` + map[int]string{0: "0", 1: "1"}[n] + `
ratekeeper_failure_state{state="healthy"} ` + map[int]string{0: "1", 1: "0"}[n] + `
ratekeeper_failure_state{state="open"} 0
`
	}
	old := build()
	serve(old.Handler(http.NotFoundHandler()))
	if err := testutil.GatherAndCompare(reg, strings.NewReader(fallback(1)), "ratekeeper_failure_state"); err != nil {
		t.Fatalf("falling back: %v", err)
	}
	logged.Reset()
	old.Close()
	if err := testutil.GatherAndCompare(reg, strings.NewReader(fallback(0)), "ratekeeper_failure_state"); err != nil {
		t.Errorf("closed in fallback: %v", err)
	}
	if logged.Len() != 0 {
		t.Errorf("Close logged %q, want nothing (a close is no recovery)", logged.String())
	}
	m := build()
	serve(m.Handler(http.NotFoundHandler()))
	if err := testutil.GatherAndCompare(reg, strings.NewReader(fallback(1)), "ratekeeper_failure_state"); err != nil {
		t.Errorf("new middleware falling back: %v", err)
	}
	runtime.KeepAlive(m)
}
