package middleware_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// guardOf returns the guard of m's first policy, if any.
func guardOf(m *middleware.Middleware) (algorithms.Spec, bool) {
	return m.Set().Policy(0).Guard()
}

// TestReloadTighterKeepsUsage: a reload lowering a policy's limit (an
// operator tightening a login limit under attack) does not hand clients a
// fresh quota: one that used its 10 of the minute stays refused for the
// rest of it at the new 5, and gets 5 in the next; the reload's guard ends
// once the old Spec's counters can hold nothing from before it (two
// windows for a fixed window), at the first request after that. On the
// memory store and on Redis alike.
func TestReloadTighterKeepsUsage(t *testing.T) {
	for _, name := range storetest.Names {
		t.Run(name, func(t *testing.T) {
			clock := algotest.NewClock(time.Unix(1_700_000_040, 0)) // a minute's start
			store := storetest.New(t, name, clock)
			m := middleware.MustNew(store, []*policy.Policy{fixed("login", 10, time.Minute, remote)}, middleware.WithClock(clock))
			h := m.Handler(ok)
			admitted := func(n int) int { return admittedOf(h, n) }
			clock.Advance(10 * time.Second)
			if got := admitted(10); got != 10 {
				t.Fatalf("at 10 per minute: %d of 10 admitted", got)
			}
			if err := m.SetPolicies([]*policy.Policy{fixed("login", 5, time.Minute, remote)}); err != nil {
				t.Fatal(err)
			}
			if g, ok := guardOf(m); !ok || g.Limit != 10 {
				t.Fatalf("after the reload to 5: guard %+v, %v; want the replaced Spec (10)", g, ok)
			}
			w := serve(h, "GET", "/")
			if w.Code != http.StatusTooManyRequests || w.Header().Get("RateLimit-Policy") != `"login";q=5;w=60` {
				t.Errorf("after the reload, same minute: %d %q, want 429 under q=5", w.Code, w.Header().Get("RateLimit-Policy"))
			}
			clock.Advance(50 * time.Second) // the next minute
			if got := admitted(6); got != 5 {
				t.Errorf("next minute at 5: %d of 6 admitted, want 5", got)
			}
			clock.Advance(70 * time.Second) // two windows after the reload
			serve(h, "GET", "/")
			if g, ok := guardOf(m); ok {
				t.Errorf("two windows after the reload: still guarded by %+v", g)
			}
		})
	}
}

// TestReloadCarryOnlyWhenTighter: a reload that changes the algorithm to
// another machine, or that shortens the window, starts the policy afresh
// (the one's counters would not count as the other's; a shorter window
// admits more in some respect; a raised limit is another matter:
// TestReloadRaisedKeepsUsage; a longer window, TestReloadTightenedShapeKeepsUsage);
// one that keeps a policy's Spec keeps
// the guard a reload before gave it, until its end.
func TestReloadCarryOnlyWhenTighter(t *testing.T) {
	store, clock := newStore(t)
	for _, to := range []*policy.Policy{
		fixed("p", 5, time.Second, remote),
		policy.Must(policy.PerMinute("p", 5, remote)), // sliding window
	} {
		m := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, remote)}, middleware.WithClock(clock))
		if err := m.SetPolicies([]*policy.Policy{to}); err != nil {
			t.Fatal(err)
		}
		if g, ok := guardOf(m); ok {
			t.Errorf("10/min fixed window reloaded as %v: guarded by %+v, want no guard", to.Spec(), g)
		}
	}
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, remote)}, middleware.WithClock(clock))
	if err := m.SetPolicies([]*policy.Policy{fixed("p", 5, time.Minute, remote)}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	if err := m.SetPolicies([]*policy.Policy{fixed("p", 5, time.Minute, remote), fixed("q", 1, time.Minute, remote)}); err != nil {
		t.Fatal(err)
	}
	if g, ok := guardOf(m); !ok || g.Limit != 10 {
		t.Errorf("a reload keeping p's Spec within its guard's time: guard %+v, %v; want the 10 kept", g, ok)
	}
	clock.Advance(time.Minute)
	if err := m.SetPolicies([]*policy.Policy{fixed("p", 5, time.Minute, remote)}); err != nil {
		t.Fatal(err)
	}
	if g, ok := guardOf(m); ok {
		t.Errorf("a reload after the guard's time: guarded by %+v, want none", g)
	}
}

// TestReloadCarryWithSetLimit: a policy lowered by SetLimit and then
// reloaded tighter enters at its carried-over limit, guarded by its new
// configured Spec and by the Spec the reload replaced; once the reload's
// guard ends, by its configured Spec alone.
func TestReloadCarryWithSetLimit(t *testing.T) {
	store, clock := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, remote)}, middleware.WithClock(clock))
	if err := m.SetLimit("p", 8); err != nil {
		t.Fatal(err)
	}
	if err := m.SetPolicies([]*policy.Policy{fixed("p", 5, time.Minute, remote)}); err != nil {
		t.Fatal(err)
	}
	if l := m.Set().Policy(0).Spec().Limit; l != 4 {
		t.Fatalf("80%% of 10, reloaded at 5: limit %d, want 4", l)
	}
	limits := func() []int64 {
		var ls []int64
		for _, g := range m.Set().Policy(0).Guards() {
			ls = append(ls, g.Limit)
		}
		return ls
	}
	if gs := limits(); len(gs) != 2 || gs[0] != 5 || gs[1] != 10 {
		t.Errorf("during the reload's guard: guards of limits %v, want [5 10] (the configured, the replaced)", gs)
	}
	clock.Advance(2 * time.Minute)
	serve(m.Handler(ok), "GET", "/")
	if gs := limits(); len(gs) != 1 || gs[0] != 5 {
		t.Errorf("after the reload's guard: guards of limits %v, want [5] (the configured)", gs)
	}
}

// TestReloadRaisedWithinCarryKeepsUsage: a reload that raises a limit a
// reload before lowered, while that one's guard runs and still below the
// Spec it replaced, keeps the guard: the replaced Spec's counters hold
// every request of the window, and, judged at the new limit, let a client
// that used 50 of it get 30 more at 80, not a fresh 80. Raised back to
// the replaced Spec itself, the policy counts in that Spec's counters
// and needs no guard. Through a ServeMux, on the memory store and on
// Redis.
func TestReloadRaisedWithinCarryKeepsUsage(t *testing.T) {
	for _, name := range storetest.Names {
		t.Run(name, func(t *testing.T) {
			clock := algotest.NewClock(time.Unix(1_700_000_040, 0)) // a minute's start
			store := storetest.New(t, name, clock)
			m := middleware.MustNew(store, []*policy.Policy{fixed("p", 100, time.Minute, remote)}, middleware.WithClock(clock))
			mux := http.NewServeMux()
			mux.Handle("/", m.Handler(ok))
			clock.Advance(10 * time.Second)
			if got := admittedOf(mux, 45); got != 45 {
				t.Fatalf("at 100 a minute: %d of 45 admitted", got)
			}
			reload := func(limit int64) {
				t.Helper()
				if err := m.SetPolicies([]*policy.Policy{fixed("p", limit, time.Minute, remote)}); err != nil {
					t.Fatal(err)
				}
			}
			reload(50)
			if got := admittedOf(mux, 10); got != 5 {
				t.Fatalf("reloaded at 50 after 45 used: %d of 10 admitted, want 5", got)
			}
			reload(80)
			if g, ok := guardOf(m); !ok || g.Limit != 100 {
				t.Errorf("raised to 80 within the carry of 100: guard %+v, %v; want the 100 kept", g, ok)
			}
			w := serve(mux, "GET", "/")
			if got, want := w.Header().Get("RateLimit"), `"p";r=29;t=50`; w.Code != http.StatusOK || got != want {
				t.Errorf("raised to 80, 50 used: %d %q, want 200 %q", w.Code, got, want)
			}
			if got := admittedOf(mux, 60); got != 29 {
				t.Errorf("raised to 80, 51 used: %d of 60 admitted, want 29", got)
			}
			reload(100)
			if g, ok := guardOf(m); ok {
				t.Errorf("back at the replaced 100: guarded by %+v, want none", g)
			}
			if got := admittedOf(mux, 30); got != 20 {
				t.Errorf("back at 100, 80 used: %d of 30 admitted, want 20", got)
			}
		})
	}
}
