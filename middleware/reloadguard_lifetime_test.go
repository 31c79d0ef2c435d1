package middleware_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// tbBurst returns a token_bucket of 20 a minute whose burst is burst (0:
// its limit).
func tbBurst(burst int64) algorithms.Spec {
	return algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 20, Window: time.Minute, Burst: burst}
}

// reloadTo reloads m with the one policy p of spec.
func reloadTo(t *testing.T, m *middleware.Middleware, spec algorithms.Spec) {
	t.Helper()
	if err := m.SetPolicies([]*policy.Policy{policy.Must(policy.New("p", spec, remote))}); err != nil {
		t.Fatal(err)
	}
}

// guardsOf returns the guards of m's policy in force.
func guardsOf(m *middleware.Middleware) []algorithms.Spec {
	return m.Set().Policy(0).Guards()
}

// TestReloadTightenedThriceKeepsUsage: a policy tightened three times
// within its guards' time gets no more at once after the third reload
// than it would have without it (a twin reloaded twice), nor more than
// its new capacity: each reload adds the Spec it replaces to the guards
// still running (policy.MaxCarries of them), for a token_bucket whose
// burst is lowered three times, and for a fixed_window lengthened, then
// lowered twice (the Specs of the new shape are one guard: the counters
// of the first of them, judged at the limit in force, hold the others').
func TestReloadTightenedThriceKeepsUsage(t *testing.T) {
	fw := func(limit int64, w time.Duration) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: limit, Window: w}
	}
	cases := []struct {
		name   string
		specs  [4]algorithms.Spec
		uses   [3]int // under each of the first three
		guards int    // after the third reload
	}{
		{"token_bucket burst 20, 10, 5, 3, used under 5", [4]algorithms.Spec{tbBurst(0), tbBurst(10), tbBurst(5), tbBurst(3)}, [3]int{0, 0, 5}, 3},
		{"token_bucket burst 20, 10, 5, 3, used under 10", [4]algorithms.Spec{tbBurst(0), tbBurst(10), tbBurst(5), tbBurst(3)}, [3]int{0, 10, 0}, 3},
		{"token_bucket burst 20, 10, 5, 3, used before all", [4]algorithms.Spec{tbBurst(0), tbBurst(10), tbBurst(5), tbBurst(3)}, [3]int{20, 0, 0}, 3},
		{"token_bucket burst 20, 10, 5, 3, used throughout", [4]algorithms.Spec{tbBurst(0), tbBurst(10), tbBurst(5), tbBurst(3)}, [3]int{12, 4, 2}, 3},
		{"fixed_window a minute, an hour, 8, 5", [4]algorithms.Spec{fw(10, time.Minute), fw(10, time.Hour), fw(8, time.Hour), fw(5, time.Hour)}, [3]int{0, 6, 1}, 2},
		{"fixed_window a minute, an hour, 8, 5, used before all", [4]algorithms.Spec{fw(10, time.Minute), fw(10, time.Hour), fw(8, time.Hour), fw(5, time.Hour)}, [3]int{4, 2, 1}, 2},
	}
	for _, name := range storetest.Names {
		for i, tc := range cases {
			router := []string{"chi", "mux"}[i%2]
			t.Run(fmt.Sprintf("%s/%s/%s", name, tc.name, router), func(t *testing.T) {
				clock := algotest.NewClock(t0)
				newM := func() *middleware.Middleware {
					return middleware.MustNew(storetest.New(t, name, clock), []*policy.Policy{policy.Must(policy.New("p", tc.specs[0], remote))}, middleware.WithClock(clock))
				}
				// m is reloaded three times; twin, the first two only.
				m, twin := newM(), newM()
				h, ht := routed(router, m), routed(router, twin)
				clock.Advance(10 * time.Second)
				for k, use := range tc.uses {
					if k > 0 {
						reloadTo(t, m, tc.specs[k])
						reloadTo(t, twin, tc.specs[k])
					}
					if got, gt := admittedOf(h, use), admittedOf(ht, use); got != use || gt != use {
						t.Fatalf("under %v: %d and %d of %d", tc.specs[k], got, gt, use)
					}
				}
				reloadTo(t, m, tc.specs[3])
				if gs := guardsOf(m); len(gs) != tc.guards {
					t.Errorf("reloaded thrice: guards %v, want %d", gs, tc.guards)
				}
				got, want := admittedOf(h, 30), admittedOf(ht, 30)
				want = min(want, int(tc.specs[3].Capacity()))
				if got > want {
					t.Errorf("tightened a third time to %v (guards %v): %d of 30 admitted at once; without that reload, %d",
						tc.specs[3], guardsOf(m), got, want)
				}
			})
		}
	}
}

// TestReloadGuardsEndApart: the guards two reloads give a policy end
// apart, each when its own Spec's counters can hold no request of before
// its reload (see SetPolicies), at the first request after it: a
// token_bucket of 20 a minute whose burst is lowered to 10 at 10 s, then
// to 5 at 50 s, is guarded by the 20 until 130 s (its 60 s to fill, and a
// window) and by the 10 until 140 s (30 s, and a window). Neither end
// hands the client more than the Specs still in force give: one that
// emptied the bucket of 5 at 128 s gets what that bucket refills, one
// every 3 s.
func TestReloadGuardsEndApart(t *testing.T) {
	for _, name := range storetest.Names {
		t.Run(name, func(t *testing.T) {
			clock := algotest.NewClock(t0)
			m := middleware.MustNew(storetest.New(t, name, clock), []*policy.Policy{policy.Must(policy.New("p", tbBurst(0), remote))}, middleware.WithClock(clock))
			h := routed("chi", m)
			clock.Advance(10 * time.Second)
			reloadTo(t, m, tbBurst(10))
			clock.Advance(40 * time.Second)
			reloadTo(t, m, tbBurst(5))
			if gs := guardsOf(m); !slices.Equal(gs, []algorithms.Spec{tbBurst(0), tbBurst(10)}) {
				t.Fatalf("at 50 s: guards %v, want the 20 and the 10", gs)
			}
			steps := []struct {
				at     time.Duration // since t0
				guards []algorithms.Spec
			}{
				{128 * time.Second, []algorithms.Spec{tbBurst(0), tbBurst(10)}},
				{130 * time.Second, []algorithms.Spec{tbBurst(10)}},
				{139 * time.Second, []algorithms.Spec{tbBurst(10)}},
				{140 * time.Second, nil},
			}
			at := 50 * time.Second
			for i, s := range steps {
				clock.Advance(s.at - at)
				at = s.at
				n := admittedOf(h, 10)
				if gs := guardsOf(m); !slices.Equal(gs, s.guards) {
					t.Errorf("at %v: guards %v, want %v", s.at, gs, s.guards)
				}
				// The bucket of 5 holds the client throughout: full at
				// the first step, then refilled 20 a minute.
				if want := []int{5, 0, 3, 1}[i]; n != want {
					t.Errorf("at %v: %d of 10 admitted, want %d", s.at, n, want)
				}
			}
		})
	}
}

// TestReloadLoosenedWithinTwoGuards: a reload that loosens a policy
// tightened twice keeps, of the guards, those that still hold its new
// Spec: a token_bucket of burst 20 lowered to 10 (and emptied there, 10
// left in the 20) and to 5 is guarded by the 20 and the 10; reloaded at
// 15, by the 20 alone (the 10 and the 5 admit less than 15), which gives
// the client its 10 left; back at 20, by none: the 20's counters, its
// own again, hold every request since.
func TestReloadLoosenedWithinTwoGuards(t *testing.T) {
	for _, name := range storetest.Names {
		for _, router := range []string{"chi", "mux"} {
			t.Run(name+"/"+router, func(t *testing.T) {
				clock := algotest.NewClock(t0)
				m := middleware.MustNew(storetest.New(t, name, clock), []*policy.Policy{policy.Must(policy.New("p", tbBurst(0), remote))}, middleware.WithClock(clock))
				h := routed(router, m)
				clock.Advance(10 * time.Second)
				reloadTo(t, m, tbBurst(10))
				if got := admittedOf(h, 10); got != 10 {
					t.Fatalf("at burst 10: %d of 10 admitted", got)
				}
				reloadTo(t, m, tbBurst(5))
				if got := admittedOf(h, 30); got != 0 {
					t.Errorf("at burst 5, the 10 emptied: %d admitted, want 0", got)
				}
				reloadTo(t, m, tbBurst(15))
				if gs := guardsOf(m); !slices.Equal(gs, []algorithms.Spec{tbBurst(0)}) {
					t.Errorf("loosened to 15: guards %v, want the 20 alone", gs)
				}
				if got := admittedOf(h, 30); got != 10 {
					t.Errorf("loosened to 15: %d of 30 admitted, want 10 (the 20's left)", got)
				}
				reloadTo(t, m, tbBurst(0))
				if gs := guardsOf(m); len(gs) != 0 {
					t.Errorf("back at 20: guards %v, want none", gs)
				}
				if got := admittedOf(h, 30); got != 0 {
					t.Errorf("back at 20, emptied: %d of 30 admitted, want 0", got)
				}
			})
		}
	}
}

// TestReloadTightenedWhileLoweredThenMoved: a token_bucket of 20 a
// minute held at 10 by SetLimit, emptied there, and reloaded at burst 10
// (in force: 10 a minute, burst 5) is guarded by its new configured Spec,
// the 20 it replaced and the lowered 10 a minute in force before (see
// TestReloadTightenedWhileLowered). Restored to its configured limit
// during those guards, it is guarded by the 20 alone (the lowered Spec,
// of a slower rate, would hold it below its limit): 10 at once, what the
// 20 has left. Lowered again, the lowered Spec guards it again, and the
// headers stay true: refused, with a Retry-After of 6 s (the lowered
// bucket's wait for a unit), and admitted once at 6 s, not at 5.
func TestReloadTightenedWhileLoweredThenMoved(t *testing.T) {
	slow := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Minute}
	for _, name := range storetest.Names {
		for _, router := range []string{"chi", "mux"} {
			t.Run(name+"/"+router, func(t *testing.T) {
				clock := algotest.NewClock(t0)
				m := middleware.MustNew(storetest.New(t, name, clock), []*policy.Policy{policy.Must(policy.New("p", tbBurst(0), remote))}, middleware.WithClock(clock))
				h := routed(router, m)
				if err := m.SetLimit("p", 10); err != nil {
					t.Fatal(err)
				}
				clock.Advance(10 * time.Second)
				if got := admittedOf(h, 30); got != 10 {
					t.Fatalf("lowered to 10: %d of 30 admitted", got)
				}
				reloadTo(t, m, tbBurst(10))
				if gs := guardsOf(m); !slices.Equal(gs, []algorithms.Spec{tbBurst(10), tbBurst(0), slow}) {
					t.Errorf("reloaded while lowered: guards %v, want the configured, the 20, the lowered 10", gs)
				}
				if got := admittedOf(h, 30); got != 0 {
					t.Errorf("reloaded while lowered: %d of 30 admitted, want 0", got)
				}
				if err := m.SetLimit("p", 0); err != nil {
					t.Fatal(err)
				}
				if gs := guardsOf(m); !slices.Equal(gs, []algorithms.Spec{tbBurst(0)}) {
					t.Errorf("restored: guards %v, want the 20 alone", gs)
				}
				if got := admittedOf(h, 30); got != 10 {
					t.Errorf("restored: %d of 30 admitted, want 10 (the 20's left)", got)
				}
				if err := m.SetLimit("p", 10); err != nil {
					t.Fatal(err)
				}
				if gs := guardsOf(m); len(gs) != 3 {
					t.Errorf("lowered again: guards %v, want three", gs)
				}
				w := serve(h, "GET", "/")
				if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "6" {
					t.Fatalf("lowered again: %d, Retry-After %q (RateLimit %q), want 429 and 6",
						w.Code, w.Header().Get("Retry-After"), w.Header().Get("RateLimit"))
				}
				clock.Advance(5 * time.Second)
				if got := admittedOf(h, 1); got != 0 {
					t.Errorf("a second before Retry-After: admitted")
				}
				clock.Advance(time.Second)
				if got := admittedOf(h, 3); got != 1 {
					t.Errorf("at Retry-After: %d of 3 admitted, want 1", got)
				}
			})
		}
	}
}

// TestNestedThreeGuardsCountOnce: one token_bucket policy (20 a minute)
// given to two nested middlewares, one of which is reloaded with its
// burst at 10 and then at 5: its copy is guarded by the 20, the very
// state the other middleware counts under its Spec, and by the 10. Each
// state a request reaches is counted once: a client that used the 10
// gets none at the 5, and, 15 s on, 5 (what the 10 refilled), which
// leave in the 20 what they found there less 5 (not less 10: counted
// twice). The request refused at the 5 is counted in the 20 by the outer
// middleware when the inner one refuses it (the outer one admitted it),
// not when the outer one does.
func TestNestedThreeGuardsCountOnce(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		for _, reloadInner := range []bool{true, false} {
			name := mux + "/outer reloaded"
			if reloadInner {
				name = mux + "/inner reloaded"
			}
			t.Run(name, func(t *testing.T) {
				store, clock := newStore(t)
				p := policy.Must(policy.New("p", tbBurst(0), remote))
				quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
				outer := middleware.MustNew(store, []*policy.Policy{p}, middleware.WithClock(clock), quiet)
				inner := middleware.MustNew(store, []*policy.Policy{p}, middleware.WithClock(clock), quiet)
				h := nestedRouter(mux, outer, inner)
				m := outer
				if reloadInner {
					m = inner
				}
				clock.Advance(10 * time.Second)
				reloadTo(t, m, tbBurst(10))
				if got := admittedOf(h, 10); got != 10 {
					t.Fatalf("at burst 10: %d of 10 admitted", got)
				}
				reloadTo(t, m, tbBurst(5))
				if gs := guardsOf(m); !slices.Equal(gs, []algorithms.Spec{tbBurst(0), tbBurst(10)}) {
					t.Fatalf("guards %v, want the 20 and the 10", gs)
				}
				if got := admittedOf(h, 1); got != 0 {
					t.Errorf("at burst 5, the 10 emptied: admitted")
				}
				clock.Advance(15 * time.Second)
				if got := admittedOf(h, 5); got != 5 {
					t.Errorf("15 s on: %d of 5 admitted, want 5", got)
				}
				twenty := middleware.MustNew(store, []*policy.Policy{p}, middleware.WithClock(clock))
				res, err := twenty.Peek(httptest.NewRequest("GET", "/", nil))
				if err != nil {
					t.Fatal(err)
				}
				// 10 left after the 10 admitted, the refused one (counted
				// further out when the inner middleware refused it), 5
				// refilled, the 5 admitted.
				want := int64(10)
				if reloadInner {
					want = 9
				}
				if got := res.Decision(0).Remaining; got != want {
					t.Errorf("the 20 after 15 admitted: %d left, want %d", got, want)
				}
			})
		}
	}
}

// TestReloadGuardsPastMaxCarries: a policy tightened more often within
// its guards' time than it has room for guards (policy.MaxCarries) is
// reloaded without error; it keeps the Spec the last reload replaced,
// whose counters know what the client used last, and of the others those
// that end last: a token_bucket of 20 a minute whose burst is lowered by
// 2 every second, emptied at its last burst, gets none at once when that
// burst is halved, and keeps the 20 (it ends last) among its guards.
func TestReloadGuardsPastMaxCarries(t *testing.T) {
	for _, name := range storetest.Names {
		t.Run(name, func(t *testing.T) {
			clock := algotest.NewClock(t0)
			m := middleware.MustNew(storetest.New(t, name, clock), []*policy.Policy{policy.Must(policy.New("p", tbBurst(0), remote))}, middleware.WithClock(clock))
			h := routed("mux", m)
			last := int64(20)
			for range policy.MaxCarries {
				last -= 2
				clock.Advance(time.Second)
				reloadTo(t, m, tbBurst(last))
			}
			if gs := guardsOf(m); len(gs) != policy.MaxCarries {
				t.Fatalf("reloaded %d times: guards %v", policy.MaxCarries, gs)
			}
			if got := admittedOf(h, int(last)); got != int(last) {
				t.Fatalf("at burst %d: %d of %d admitted", last, got, last)
			}
			clock.Advance(time.Second)
			reloadTo(t, m, tbBurst(last/2))
			gs := guardsOf(m)
			if len(gs) != policy.MaxCarries || !slices.Contains(gs, tbBurst(last)) || !slices.Contains(gs, tbBurst(0)) {
				t.Errorf("guards %v, want %d, the %d and the 20 among them", gs, policy.MaxCarries, last)
			}
			if got := admittedOf(h, int(last)); got != 0 {
				t.Errorf("at burst %d, the %d emptied: %d admitted, want 0", last/2, last, got)
			}
		})
	}
}

// TestAllocationsThreeReloadGuards: a request of a policy guarded by
// three reloads' Specs, or by policy.MaxCarries of them and lowered by
// SetLimit, costs what one guarded by one does: the store call of its
// checks (up to eight) is kept in one allocation of its Result's.
func TestAllocationsThreeReloadGuards(t *testing.T) {
	store, clock := newStore(t)
	spec := func(burst int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1_000_000, Window: time.Minute, Burst: burst}
	}
	m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("p", spec(0), remote))}, middleware.WithClock(clock))
	h := m.Handler(ok)
	r := httptest.NewRequest("GET", "/", nil)
	h.ServeHTTP(httptest.NewRecorder(), r)
	reloadTo(t, m, spec(800_000))
	one := allocsPerRequest(h)
	for _, b := range []int64{600_000, 400_000} {
		reloadTo(t, m, spec(b))
	}
	h.ServeHTTP(httptest.NewRecorder(), r)
	if gs := guardsOf(m); len(gs) != 3 {
		t.Fatalf("guards %v, want three", gs)
	}
	if got := allocsPerRequest(h); got > one {
		t.Errorf("three reloads' guards: %v allocations per request, want at most %v (one guard's)", got, one)
	}
	for b := int64(300_000); len(guardsOf(m)) < policy.MaxCarries; b -= 50_000 {
		reloadTo(t, m, spec(b))
	}
	if err := m.SetLimit("p", 500_000); err != nil {
		t.Fatal(err)
	}
	h.ServeHTTP(httptest.NewRecorder(), r)
	if gs := guardsOf(m); len(gs) != policy.MaxGuards {
		t.Fatalf("guards %v, want %d", gs, policy.MaxGuards)
	}
	if got := allocsPerRequest(h); got > one {
		t.Errorf("%d guards: %v allocations per request, want at most %v (one guard's)", policy.MaxGuards, got, one)
	}
}
