package middleware_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestAllPoliciesSkippedIsNoStoreAnswer: a request for which every policy
// that applies was left out (policy.SkipPolicy: no key) needs no store
// call, and makes none. It must not count as an answer of the store's
// backend: under an outage it reset the run of failures (so that the
// breaker never opened while such requests came between the failing
// ones) and put the State back to healthy; and with the breaker open, it
// was refused (FailClosed: 503) for a store it did not need.
func TestAllPoliciesSkippedIsNoStoreAnswer(t *testing.T) {
	store := &failing{}
	perUser := fixed("per-user", 5, time.Minute, user, policy.OnKeyError(policy.SkipPolicy))
	m := middleware.MustNew(store, []*policy.Policy{perUser},
		middleware.OnStoreError(middleware.FailClosed(time.Second)), middleware.WithBreaker(3, time.Hour))
	h := m.Handler(ok)
	for i := range 3 {
		if w := serve(h, "GET", "/", "X-User", "u"); w.Code != 503 {
			t.Fatalf("user request %d with the store down: %d, want 503", i, w.Code)
		}
		w := serve(h, "GET", "/") // anonymous: per-user is skipped
		if w.Code != 200 {
			t.Errorf("anonymous request %d (no policy applies with a key): %d, want 200", i, w.Code)
		}
		if s := m.State(); s != middleware.StateFailingClosed {
			t.Errorf("after anonymous request %d: State %v, want %v (the store was not asked)", i, s, middleware.StateFailingClosed)
		}
	}
	// Three failures in a row of the store: the breaker is open.
	serve(h, "GET", "/", "X-User", "u")
	if st := m.Stats(); store.calls != 3 || st.BreakerOpen != 1 {
		t.Errorf("after 3 failures in a row: %d store calls, %d kept from the store by the breaker; want 3 and 1 (stats %+v)", store.calls, st.BreakerOpen, st)
	}
	if w := serve(h, "GET", "/"); w.Code != 200 {
		t.Errorf("anonymous request with the breaker open: %d, want 200", w.Code)
	}
	if st := m.Stats(); st.FailedClosed != 4 || st.StoreErrors != 4 {
		t.Errorf("stats %+v, want the 4 user requests alone failed closed and counted as store errors", st)
	}
}

// TestSkippedRequestIsNoProbe: once the breaker's cooldown has passed,
// the next request probes the store. A request that needs no store call
// (every applicable policy skipped) is no probe: it took the probe and,
// its check-less Take succeeding, closed the breaker and set the State
// back to healthy without the store having been asked.
func TestSkippedRequestIsNoProbe(t *testing.T) {
	store := &failing{}
	clock := algotest.NewClock(t0)
	perUser := fixed("per-user", 5, time.Minute, user, policy.OnKeyError(policy.SkipPolicy))
	m := middleware.MustNew(store, []*policy.Policy{perUser}, middleware.WithClock(clock),
		middleware.OnStoreError(middleware.FailClosed(time.Second)), middleware.WithBreaker(2, time.Minute))
	h := m.Handler(ok)
	for range 2 {
		serve(h, "GET", "/", "X-User", "u")
	}
	clock.Advance(time.Minute) // the cooldown is over: the next store call probes
	if w := serve(h, "GET", "/"); w.Code != 200 {
		t.Errorf("anonymous request after the cooldown: %d, want 200", w.Code)
	}
	if s := m.State(); s != middleware.StateFailingClosed {
		t.Errorf("after an anonymous request: State %v, want %v (the store was not asked)", s, middleware.StateFailingClosed)
	}
	serve(h, "GET", "/", "X-User", "u") // the probe: the store is called, and fails
	serve(h, "GET", "/", "X-User", "u") // the breaker is open again
	if st := m.Stats(); store.calls != 3 || st.BreakerOpen != 1 {
		t.Errorf("%d store calls, %d kept from the store by the breaker; want 3 (2 failures, 1 probe) and 1 (stats %+v)", store.calls, st.BreakerOpen, st)
	}
}
