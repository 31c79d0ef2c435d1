package otelmetrics_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestDiscardedFailingMiddlewareLeavesFailureState: one Observer shared by
// a middleware failing closed and the middleware an application's reload
// replaces it with, on a store that answers. Once the old one is closed,
// ratekeeper.failure_state, read by the SDK's manual reader, says healthy,
// not closed for ever; a late request the closed one still decides on its
// failing store does not bring its state back.
func TestDiscardedFailingMiddlewareLeavesFailureState(t *testing.T) {
	obs, reader := newObserver(t)
	mem := memStore(t)
	down := &switchable{Store: mem}
	down.down.Store(true)
	build := func(store algorithms.Store) *middleware.Middleware {
		return middleware.MustNew(store, []*policy.Policy{fixed("p", 100, user)},
			middleware.WithObserver(obs), middleware.OnStoreError(middleware.FailClosed(0)), middleware.WithBreaker(0, 0))
	}
	old := build(down)
	if code := get(router(old), "/", "X-User", "ann"); code != http.StatusServiceUnavailable {
		t.Fatalf("old middleware, store down: %d, want 503", code)
	}
	points, _ := collect(t, reader)
	if got, want := stateLine(t, points), "healthy=0 open=0 closed=1 fallback=0"; got != want {
		t.Fatalf("old middleware failing closed: %s, want %s", got, want)
	}

	m := build(mem)
	if code := get(router(m), "/", "X-User", "ann"); code != http.StatusOK {
		t.Fatalf("new middleware: %d", code)
	}
	closer, ok := any(old).(io.Closer)
	if !ok {
		points, _ = collect(t, reader)
		t.Fatalf("a discarded *middleware.Middleware has no Close, and failure_state keeps its state for ever: %s", stateLine(t, points))
	}
	if err := closer.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	points, _ = collect(t, reader)
	if got, want := stateLine(t, points), "healthy=1 open=0 closed=0 fallback=0"; got != want {
		t.Errorf("old middleware closed, new one healthy: %s, want %s", got, want)
	}

	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-User", "ann")
	old.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})).ServeHTTP(w, r)
	if w.Code != http.StatusServiceUnavailable {
		t.Fatalf("late request on the closed middleware: %d, want 503 (it still fails closed)", w.Code)
	}
	points, _ = collect(t, reader)
	if got, want := stateLine(t, points), "healthy=1 open=0 closed=0 fallback=0"; got != want {
		t.Errorf("late failure on the closed middleware: %s, want %s", got, want)
	}
	if got := points["ratekeeper.errors{kind=store,policy=p}"]; got != 2 {
		t.Errorf("store errors %d, want 2 (the late request counts): %v", got, points)
	}
}
