package middleware_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestFallbackFailureLeavesState: with FallBack, a store error that says
// nothing of the backend (an invalid check, a closed store) leaves the
// State as it was, and one about a key's value (ErrKeyState, the
// backend's answer) leaves it healthy, even when the fallback store then
// fails too: the State follows the store's backend, not the fallback. The
// fallback's failure moved it to StateFallback, and since the backend had
// no failure in its count the next success did not move it back: the
// middleware reported the fallback for good while the store answered.
func TestFallbackFailureLeavesState(t *testing.T) {
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"key state", errWrongType},
		{"invalid spec", &algorithms.SpecError{Field: "Limit", Reason: "too large for this store"}},
		{"closed", algorithms.ErrClosed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mem, clock := newStore(t)
			s := &scripted{mem: mem, fail: []error{tt.err}}
			fbMem, _ := newStore(t)
			fb := &scripted{mem: fbMem, fail: []error{errDown}}
			released := make(chan struct{})
			close(released) // no change is held
			obs := &stateLog{entered: make(chan struct{}), release: released}
			m := middleware.MustNew(s, []*policy.Policy{fixed("u", 100, time.Minute, user)},
				middleware.OnStoreError(middleware.FallBack(fb)), middleware.WithClock(clock), middleware.WithObserver(obs))
			h := m.Handler(ok)
			if w := serve(h, "GET", "/", "X-User", "u"); w.Code != 200 || w.Header().Get("RateLimit") != "" || fb.calls != 1 {
				t.Fatalf("the request: %d RateLimit %q, %d fallback calls; want it let through unlimited after the fallback failed",
					w.Code, w.Header().Get("RateLimit"), fb.calls)
			}
			if m.State() != middleware.StateHealthy {
				t.Errorf("state %v after %v and a failing fallback, want healthy", m.State(), tt.err)
			}
			if w := serve(h, "GET", "/", "X-User", "u"); w.Code != 200 || w.Header().Get("RateLimit") == "" {
				t.Fatalf("the next request: %d RateLimit %q; want it decided by the store", w.Code, w.Header().Get("RateLimit"))
			}
			if m.State() != middleware.StateHealthy || len(obs.got) != 0 {
				t.Errorf("after the store answered: state %v, changes %v; want healthy, unchanged", m.State(), obs.got)
			}
			if st := m.Stats(); st.StoreErrors != 2 {
				t.Errorf("stats %+v; want StoreErrors 2 (the store's error and the fallback's)", st)
			}
		})
	}
}

// TestFallbackNotAskedForEndedRequest: a request whose client went away
// while the breaker keeps the store from it is answered as abandoned, the
// fallback store not asked: its context has ended, and a fallback call on
// it fails for that alone. The fallback was called, failed with the
// request's context.Canceled, and that counted as a second store error
// (StoreErrors 2) and went to the error handler as a failure of the
// fallback store.
func TestFallbackNotAskedForEndedRequest(t *testing.T) {
	mem, clock := newStore(t)
	s := &scripted{mem: mem, fail: []error{errDown}}
	fbMem, _ := newStore(t)
	fb := &scripted{mem: fbMem}
	var errs []error
	m := middleware.MustNew(s, []*policy.Policy{fixed("u", 100, time.Minute, user)},
		middleware.OnStoreError(middleware.FallBack(fb)), middleware.WithBreaker(1, 10*time.Second), middleware.WithClock(clock),
		middleware.WithErrorHandler(func(_ *http.Request, err error) { errs = append(errs, err) }))
	h := m.Handler(ok)
	serve(h, "GET", "/", "X-User", "u") // fails, decided by the fallback: open
	if st := m.Stats(); st.BreakerOpen != 0 || st.Fallback != 1 || fb.calls != 1 {
		t.Fatalf("after the failure: stats %+v, %d fallback calls", st, fb.calls)
	}
	errs = nil
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := serveCtx(ctx, h, "GET", "/", "X-User", "u")
	st := m.Stats()
	if w.Code != 503 || s.calls != 1 || fb.calls != 1 || st.BreakerOpen != 1 || st.StoreErrors != 2 || st.Abandoned != 1 || st.Fallback != 1 {
		t.Errorf("the gone client's request: %d, %d store calls (want 1), %d fallback calls (want 1), stats %+v; want it abandoned, counted once as kept from the store",
			w.Code, s.calls, fb.calls, st)
	}
	if len(errs) != 1 || !errors.Is(errs[0], middleware.ErrBreakerOpen) {
		t.Errorf("errors reported %v, want ErrBreakerOpen alone", errs)
	}
}
