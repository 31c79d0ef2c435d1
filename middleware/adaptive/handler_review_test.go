package adaptive_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestHandlerIgnoresPanicAfterClientGone: Controller.Handler reports a
// handler that panics as a 500, which with a slow response makes a period
// slow and failing (the limit drops to 80%), but not one that panics after
// its client went away (a reverse proxy's copy to a client that hung up):
// that says nothing of the service, and its period, with no request
// observed, is healthy.
func TestHandlerIgnoresPanicAfterClientGone(t *testing.T) {
	m := newMiddleware(t, 100)
	clock := algotest.NewClock(t0)
	c, err := adaptive.New(m, adaptive.Config{Clock: clock, Period: time.Minute, Baseline: time.Millisecond, MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	hangUp := func() {}
	r := chi.NewRouter()
	r.Use(c.Handler)
	r.Get("/", func(http.ResponseWriter, *http.Request) {
		clock.Advance(10 * time.Millisecond) // 10 times the baseline
		hangUp()
		panic(http.ErrAbortHandler)
	})
	serve := func(req *http.Request) {
		t.Helper()
		defer func() {
			if p := recover(); p != http.ErrAbortHandler {
				t.Fatalf("panic %v, want http.ErrAbortHandler passed on", p)
			}
		}()
		r.ServeHTTP(httptest.NewRecorder(), req)
	}

	ctx, cancel := context.WithCancel(context.Background())
	hangUp = cancel
	serve(httptest.NewRequest("GET", "/", nil).WithContext(ctx))
	clock.Advance(time.Minute)
	if err := c.Evaluate(); err != nil {
		t.Fatal(err)
	}
	if got := limitsOf(m); got != "100" || c.Level() != 1 {
		t.Fatalf("after a panic of a client gone: limit %s, level %v; want 100, 1", got, c.Level())
	}

	hangUp = func() {}
	serve(httptest.NewRequest("GET", "/", nil))
	clock.Advance(time.Minute)
	if err := c.Evaluate(); err != nil {
		t.Fatal(err)
	}
	if got := limitsOf(m); got != "80" {
		t.Errorf("after a panic of a live request (a slow 500): limit %s, want 80", got)
	}
}
