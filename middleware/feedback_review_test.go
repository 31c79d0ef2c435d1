package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestFeedbackPanicAfterClientGone: a handler that panics is reported to
// the Feedback as a 500 (the server failed the request), unless the
// request's client had gone away (its context canceled): a reverse proxy
// panics with http.ErrAbortHandler when its copy to a client that hung up
// fails, which says nothing of the service's health, and no status reached
// anyone. Such a request is not reported, as SetFeedback says (as a
// hijacked one is not).
func TestFeedbackPanicAfterClientGone(t *testing.T) {
	store, clock := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 100, time.Minute, remote)}, middleware.WithClock(clock))
	fb := &feedbackRecorder{}
	m.SetFeedback(fb)
	hangUp := func() {} // the client hangs up while the handler runs
	r := chi.NewRouter()
	r.Use(m.Handler)
	r.Get("/", func(http.ResponseWriter, *http.Request) {
		clock.Advance(3 * time.Millisecond)
		hangUp()
		panic(http.ErrAbortHandler)
	})
	panics := func(req *http.Request) (p any) {
		defer func() { p = recover() }()
		r.ServeHTTP(httptest.NewRecorder(), req)
		return nil
	}

	if p := panics(httptest.NewRequest("GET", "/", nil)); p != http.ErrAbortHandler {
		t.Fatalf("panic %v, want http.ErrAbortHandler passed on", p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	hangUp = cancel
	if p := panics(httptest.NewRequest("GET", "/", nil).WithContext(ctx)); p != http.ErrAbortHandler {
		t.Fatalf("client gone: panic %v, want http.ErrAbortHandler passed on", p)
	}
	if want := []string{"500/3ms"}; !slices.Equal(fb.got, want) {
		t.Errorf("Feedback told %q, want %q (the panic of a live request only)", fb.got, want)
	}
}
