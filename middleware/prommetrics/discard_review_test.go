package prommetrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metrictest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// stateWant is the failure_state family with healthy and open set as
// given, closed and fallback 0.
func stateWant(healthy, open int) string {
	return `
# HELP ratekeeper_failure_state 1 for each failure state (open, closed, fallback) an observed middleware is in; healthy is 1 when none is failing.
# TYPE ratekeeper_failure_state gauge
ratekeeper_failure_state{state="closed"} 0
ratekeeper_failure_state{state="fallback"} 0
ratekeeper_failure_state{state="healthy"} ` + strconv.Itoa(healthy) + `
ratekeeper_failure_state{state="open"} ` + strconv.Itoa(open) + "\n"
}

// TestDiscardedFailingMiddlewareLeavesFailureState: an application that
// rebuilds its middleware (a configuration change ApplyConfig cannot
// apply in place, such as its failure mode) and swaps the new one in,
// sharing the one Metrics its registry allows, closes the old one. The
// old one was failing open; the new one, on a store that answers, is
// healthy: once the old one is closed, failure_state must say healthy,
// not open for ever. Closing it again changes nothing; a request it still
// serves afterwards on the failing store is counted, but moves no
// failure_state of a middleware that is gone.
func TestDiscardedFailingMiddlewareLeavesFailureState(t *testing.T) {
	reg, metrics, mem := metricsAndStore(t)
	down := &switchable{Store: mem}
	down.down.Store(true)
	build := func(store algorithms.Store) *middleware.Middleware {
		return middleware.MustNew(store, []*policy.Policy{fixed("per-ip", 100, remote)},
			middleware.WithObserver(metrics), middleware.OnStoreError(middleware.FailOpen()), middleware.WithBreaker(0, 0))
	}
	// The application's handler, swapped by its reload.
	var current swapped
	mount := func(m *middleware.Middleware) {
		r := chi.NewRouter()
		r.Use(m.Handler)
		r.Get("/", func(http.ResponseWriter, *http.Request) {})
		current.h.Store(r)
	}
	old := build(down)
	mount(old)
	serve(&current)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(stateWant(0, 1)), "ratekeeper_failure_state"); err != nil {
		t.Fatalf("old middleware failing open: %v", err)
	}

	// The reload: a new middleware, on a store that answers, swapped in.
	m := build(mem)
	mount(m)
	if code := serve(&current); code != http.StatusOK {
		t.Fatalf("new middleware: %d", code)
	}
	closer, ok := any(old).(io.Closer)
	if !ok {
		err := testutil.GatherAndCompare(reg, strings.NewReader(stateWant(1, 0)), "ratekeeper_failure_state")
		t.Fatalf("a discarded *middleware.Middleware has no Close, and failure_state keeps its state for ever: %v", err)
	}
	for range 2 { // idempotent
		if err := closer.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := testutil.GatherAndCompare(reg, strings.NewReader(stateWant(1, 0)), "ratekeeper_failure_state"); err != nil {
			t.Errorf("old middleware closed, new one healthy: %v", err)
		}
	}

	// A request still in flight on the old middleware, its store failing:
	// counted as a store error, but the old one's state is no longer
	// reported.
	w := httptest.NewRecorder()
	old.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	if w.Code != http.StatusOK {
		t.Fatalf("late request on the closed middleware: %d, want it served (failing open)", w.Code)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(stateWant(1, 0)), "ratekeeper_failure_state"); err != nil {
		t.Errorf("late failure on the closed middleware: %v", err)
	}
	if got := testutil.ToFloat64(metrics.ErrorCounter("per-ip", "store")); got != 2 {
		t.Errorf("errors_total{kind=store} = %v, want 2 (the late request counts)", got)
	}
	if got := old.State(); got != middleware.StateFailingOpen {
		t.Errorf("closed middleware's State() = %v, want open (it still tells its own)", got)
	}

	// Another middleware failing after the old one closed: reported.
	other := build(down)
	metrictest.KeepAlive(t, other)
	other.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	if err := testutil.GatherAndCompare(reg, strings.NewReader(stateWant(0, 1)), "ratekeeper_failure_state"); err != nil {
		t.Errorf("another middleware failing: %v", err)
	}
}

// swapped serves through the handler last stored.
type swapped struct{ h atomic.Pointer[chi.Mux] }

func (s *swapped) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.h.Load().ServeHTTP(w, r) }
