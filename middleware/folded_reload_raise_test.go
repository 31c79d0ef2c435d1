package middleware_test

import (
	"fmt"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestLoweredReloadRaisedBackToOldSpec: a policy configured at 10 a
// minute (fixed window) is held at 50% by SetLimit (5, as
// middleware/adaptive's Controller would) and a client uses its 5; a
// reload then raises the configured limit to 20, which carries the
// effective limit over in proportion, to 10: a Spec the policy had before
// (configured), whose counters hold the 5 (counted under it as the guard
// since). SetPolicies promises that a policy going back to a Spec it had
// before finds its counters: the client gets 5 more in that minute, not
// 10. Before the fold the copy at 10 checked its own Spec's counters
// (the old configured ones) beside the 20's; folded, it checks the 20's
// alone, which hold nothing. Through a ServeMux, on the memory store and
// on Redis.
func TestLoweredReloadRaisedBackToOldSpec(t *testing.T) {
	for _, name := range storetest.Names {
		t.Run(name, func(t *testing.T) {
			clock := algotest.NewClock(t0.Add(time.Second))
			store := storetest.New(t, name, clock)
			m := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, constKey)}, middleware.WithClock(clock),
				middleware.WithErrorHandler(func(*http.Request, error) {}))
			setLimit(t, m, "p", 5)
			sm := http.NewServeMux()
			sm.Handle("GET /", m.Handler(ok))
			if got := admittedOf(sm, 6); got != 5 {
				t.Fatalf("at 5: %d of 6 admitted, want 5", got)
			}
			if err := m.SetPolicies([]*policy.Policy{fixed("p", 20, time.Minute, constKey)}); err != nil {
				t.Fatal(err)
			}
			if got := m.Set().Policy(0).Spec().Limit; got != 10 {
				t.Fatalf("after the reload to 20: effective limit %d, want 10 (50%% carried over)", got)
			}
			if got := admittedOf(sm, 10); got != 5 {
				t.Errorf("at 10 after the reload, in the same minute: %d of 10 admitted, want 5 (the 10's counters hold the 5 used)", got)
			}
		})
	}
}

// TestLoweredReloadRaisedBackUnfoldsWhileHeld: in the case above, the copy
// at 10 is checked twice (its own Spec's counters, which hold the
// requests of before the reload, and the 20's judged at 10) only while
// those counters can hold them: once that has passed (a fixed window's
// carry: two windows), it is folded again, one check per request.
func TestLoweredReloadRaisedBackUnfoldsWhileHeld(t *testing.T) {
	clock := algotest.NewClock(t0.Add(time.Second))
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	store := &checksStore{MemoryStore: mem}
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, constKey)}, middleware.WithClock(clock))
	setLimit(t, m, "p", 5)
	sm := http.NewServeMux()
	sm.Handle("GET /", m.Handler(ok))
	admittedOf(sm, 1)
	if err := m.SetPolicies([]*policy.Policy{fixed("p", 20, time.Minute, constKey)}); err != nil {
		t.Fatal(err)
	}
	store.checks = nil
	admittedOf(sm, 1)
	clock.Advance(2*time.Minute + time.Second)
	admittedOf(sm, 1)
	if fmt.Sprint(store.checks) != "[2 1]" {
		t.Errorf("checks per store call after the reload, then 2 minutes later: %v, want [2 1]", store.checks)
	}
}
