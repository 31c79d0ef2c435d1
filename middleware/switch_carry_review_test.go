package middleware_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestSwitchCarryNotReloadGuard: 10 a minute lowered to 8 unguarded, the
// guard switched on at 8 (SetLimit), then the configured limit restored
// (SetLimit 0) and all 10 used,
// counted under the configured 10's counters alone. A reload then tightens
// the configured limit to 6 in the same minute: SetPolicies guards it with
// the Spec it replaced, the 10's, whose counters hold the 10 used, so the
// client gets none more in that minute. The lowered 8's Spec is no Spec a
// reload replaced: its counters hold none of the 10 and must not stand in
// for the 10's as the reload's guard (a carry of it, recorded by the
// switch, did). Through a ServeMux on the memory store.
func TestSwitchCarryNotReloadGuard(t *testing.T) {
	store, clock := newStore(t)
	clock.Advance(time.Second)
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, constKey)}, middleware.WithClock(clock))
	sm := http.NewServeMux()
	sm.Handle("GET /", m.Handler(ok))
	if err := m.SetLimitUnguarded("p", 8); err != nil {
		t.Fatal(err)
	}
	setLimit(t, m, "p", 8)
	setLimit(t, m, "p", 0)
	if got := admittedOf(sm, 10); got != 10 {
		t.Fatalf("restored to 10: %d of 10 admitted", got)
	}
	if err := m.SetPolicies([]*policy.Policy{fixed("p", 6, time.Minute, constKey)}); err != nil {
		t.Fatal(err)
	}
	if got := admittedOf(sm, 6); got != 0 {
		t.Errorf("reloaded at 6 in the same minute: %d of 6 admitted, want 0 (10 of 10 used under the replaced Spec); guards %v",
			got, m.Set().Policy(0).Guards())
	}
}
