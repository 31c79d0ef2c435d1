package middleware_test

import (
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
