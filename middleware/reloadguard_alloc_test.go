package middleware_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestAllocationsAfterReloadGuard: once a reload's guard has ended, a
// request costs what it cost before the reload: the bare handler's
// allocations and one, for every kind the guard covers.
func TestAllocationsAfterReloadGuard(t *testing.T) {
	bare := allocsPerRequest(ok)
	pairs := [][2]algorithms.Spec{
		{{Algorithm: algorithms.TokenBucket, Limit: 1_000_000, Window: time.Minute}, {Algorithm: algorithms.TokenBucket, Limit: 1_000_000, Window: time.Minute, Burst: 500_000}},
		{{Algorithm: algorithms.FixedWindow, Limit: 1_000_000, Window: time.Minute}, {Algorithm: algorithms.FixedWindow, Limit: 1_000_000, Window: time.Hour}},
		{{Algorithm: algorithms.SlidingWindow, Limit: 1_000_000, Window: time.Minute}, {Algorithm: algorithms.SlidingWindow, Limit: 500_000, Window: time.Minute}},
	}
	for _, pr := range pairs {
		store, clock := newStore(t)
		m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("p", pr[0], remote))}, middleware.WithClock(clock))
		h := m.Handler(ok)
		r := httptest.NewRequest("GET", "/", nil)
		h.ServeHTTP(httptest.NewRecorder(), r)
		if err := m.SetPolicies([]*policy.Policy{policy.Must(policy.New("p", pr[1], remote))}); err != nil {
			t.Fatal(err)
		}
		if _, ok := guardOf(m); !ok {
			t.Fatalf("%v to %v: no guard", pr[0], pr[1])
		}
		clock.Advance(3 * time.Hour)
		h.ServeHTTP(httptest.NewRecorder(), r)
		if g, ok := guardOf(m); ok {
			t.Fatalf("%v to %v: still guarded by %v", pr[0], pr[1], g)
		}
		if got := allocsPerRequest(h); got > bare+1 {
			t.Errorf("%v to %v, the guard ended: %v allocations per request, want at most %v", pr[0], pr[1], got, bare+1)
		}
	}
}
