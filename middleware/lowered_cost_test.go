package middleware_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// checksStore counts the checks of each Take of a memory store, whichever
// of its forms the middleware calls.
type checksStore struct {
	*algorithms.MemoryStore
	checks []int
}

func (s *checksStore) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	s.checks = append(s.checks, len(checks))
	return s.MemoryStore.Take(ctx, checks...)
}

func (s *checksStore) TakeInto(ctx context.Context, dst []algorithms.Decision, checks []algorithms.Check) error {
	s.checks = append(s.checks, len(checks))
	return s.MemoryStore.TakeInto(ctx, dst, checks)
}

func (s *checksStore) TakeOne(ctx context.Context, c algorithms.Check) (algorithms.Decision, error) {
	s.checks = append(s.checks, 1)
	return s.MemoryStore.TakeOne(ctx, c)
}

// TestLoweredWindowOneCheck: a window-kind policy lowered by SetLimit is
// decided by one check per request, its configured Spec's state judged
// at the lowered limit (its own Spec's, whose counters the configured
// state's hold within, would decide nothing), and by two with a reload's
// guard too (the replaced Spec's); a token_bucket policy, whose
// configured state cannot be judged at the lowered limit, keeps its two.
// The decisions are those of the double check: 40 of 100 used, lowered to
// 50, 10 more, reported against 50.
func TestLoweredWindowOneCheck(t *testing.T) {
	fw := func(l int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: l, Window: time.Minute}
	}
	for _, tc := range []struct {
		name   string
		reload bool
		spec   algorithms.Spec
		want   int
	}{
		{"fixed_window", false, fw(100), 1},
		{"fixed_window/reload", true, fw(100), 2},
		{"sliding_window", false, algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 100, Window: time.Minute}, 1},
		{"token_bucket", false, algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 100, Window: time.Minute}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem, _ := newStore(t)
			st := &checksStore{MemoryStore: mem}
			m := middleware.MustNew(st, []*policy.Policy{policy.Must(policy.New("p", tc.spec, constKey))})
			h := m.Handler(ok)
			for range 40 {
				serve(h, "GET", "/")
			}
			limit := int64(50)
			if tc.reload {
				// Reloaded at 80: the 100 guards the 80 for a while,
				// and the 50 below is judged on both.
				s80 := tc.spec
				s80.Limit = 80
				if err := m.SetPolicies([]*policy.Policy{policy.Must(policy.New("p", s80, constKey))}); err != nil {
					t.Fatal(err)
				}
				if gs := m.Set().Policy(0).Guards(); len(gs) != 1 || gs[0] != tc.spec {
					t.Fatalf("after the reload: guards %v, want the 100", gs)
				}
			}
			if err := m.SetLimit("p", limit); err != nil {
				t.Fatal(err)
			}
			st.checks = nil
			w := serve(h, "GET", "/")
			if len(st.checks) != 1 || st.checks[0] != tc.want {
				t.Errorf("checks per store call %v, want [%d]", st.checks, tc.want)
			}
			want := int64(9) // 41 of the 100 counted, judged at 50
			if tc.spec.Algorithm == algorithms.TokenBucket {
				want = 49 // at 50, its own bucket's
			}
			if got := remaining(t, w, "p"); got != want {
				t.Errorf("lowered to 50 after 40: r = %d, want %d", got, want)
			}
		})
	}
}

// TestAllocationsLoweredAsUnlowered: a window-kind policy lowered by
// SetLimit, decided by one check on its configured state, costs no
// allocation more per request than unlowered: one or four policies, with
// the request's context and without.
func TestAllocationsLoweredAsUnlowered(t *testing.T) {
	store, _ := newStore(t)
	ip := keyfunc.Must(keyfunc.IP())
	r := httptest.NewRequest("GET", "/", nil)
	for _, n := range []int{1, 4} {
		for _, ctx := range []bool{true, false} {
			var allocs [2]float64
			for j, lowered := range []bool{false, true} {
				var ps []*policy.Policy
				for i := range n {
					ps = append(ps, policy.Must(policy.Per("p"+strconv.Itoa(i), 1_000_000, time.Duration(i+1)*time.Minute, ip)))
				}
				var opts []middleware.Option
				if !ctx {
					opts = append(opts, middleware.WithoutContext())
				}
				m := middleware.MustNew(store, ps, opts...)
				if lowered {
					for i := range n {
						if err := m.SetLimit("p"+strconv.Itoa(i), 500_000); err != nil {
							t.Fatal(err)
						}
					}
				}
				h := m.Handler(ok)
				h.ServeHTTP(httptest.NewRecorder(), r) // the store's first sight of the keys allocates
				allocs[j] = allocsPerRequest(h)
			}
			if allocs[1] != allocs[0] {
				t.Errorf("%d policies, context %v: %v allocations per request lowered, %v unlowered; want as many", n, ctx, allocs[1], allocs[0])
			}
		}
	}
}

// TestFoldedOuterCountsNotTheLoweredSpec: a middleware in shadow mode
// further out runs a policy (10 a minute, fixed window) lowered to 6 by
// SetLimit, its check folded into the 10's (judged at 6): it counts
// nothing under the 6. An enforcing middleware further in runs the policy
// built at 6: that state is its own to count, or a client would get 6
// there while the shadow one admits (counting the 10), and 6 more, from a
// fresh 6, once it denies. 6 of 14 pass in a minute, and the 6's state
// holds them. Through chi and a ServeMux, on the memory store and on
// Redis.
func TestFoldedOuterCountsNotTheLoweredSpec(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, name := range storetest.Names {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(name+"/"+mux, func(t *testing.T) {
				clock := algotest.NewClock(t0.Add(time.Second))
				store := storetest.New(t, name, clock)
				outer := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, constKey)},
					middleware.WithClock(clock), middleware.WithShadow(nil), quiet)
				setLimit(t, outer, "p", 6)
				inner := middleware.MustNew(store, []*policy.Policy{fixed("p", 6, time.Minute, constKey)}, middleware.WithClock(clock), quiet)
				if got := admittedOf(nestedRouter(mux, outer, inner), 14); got != 6 {
					t.Errorf("%d of 14 admitted in a minute, want 6 (the 6 further in)", got)
				}
				six := middleware.MustNew(store, []*policy.Policy{fixed("p", 6, time.Minute, constKey)}, middleware.WithClock(clock))
				res, err := six.Peek(httptest.NewRequest("GET", "/", nil))
				if err != nil {
					t.Fatal(err)
				}
				if d := res.Decision(0); d.Allowed || d.Remaining != 0 {
					t.Errorf("the 6 after the minute's requests: %+v, want none left", d)
				}
			})
		}
	}
}

// TestFoldedOuterMemberReplaced: an enforcing middleware further out runs
// a policy (10 a minute, fixed window) lowered to 6 by SetLimit, checked
// on the 10's state alone; one further in runs the policy built at 6 (or
// reloaded from 10 to 6, guarded by the 10), which counts under the 6
// itself, with the 10 judged from the decision further out. The response
// reports the policy once, as decided further in, with the 10's count:
// r = 5, 4, ... as the one further out would, and Retry-After when the
// 6 are used. Through chi and a ServeMux.
func TestFoldedOuterMemberReplaced(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, inner := range []string{"built at 6", "reloaded to 6"} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(inner+"/"+mux, func(t *testing.T) {
				store, clock := newStore(t)
				clock.Advance(10 * time.Second)
				o := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, constKey)}, middleware.WithClock(clock), quiet)
				setLimit(t, o, "p", 6)
				in := innerAtSix(t, store, clock, inner, quiet)
				h := nestedRouter(mux, o, in)
				for i := range 6 {
					w := serve(h, "GET", "/")
					rl := w.Header().Values("RateLimit")
					want := `"p";r=` + strconv.Itoa(5-i) + ";t=50"
					if w.Code != http.StatusOK || len(rl) != 1 || rl[0] != want {
						t.Fatalf("request %d: %d, RateLimit %q; want 200 and one member %s", i+1, w.Code, rl, want)
					}
				}
				w := serve(h, "GET", "/")
				if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "50" {
					t.Errorf("request 7: %d, Retry-After %q; want 429, 50", w.Code, w.Header().Get("Retry-After"))
				}
			})
		}
	}
}

// innerAtSix returns a middleware running "p" at 6 a minute, keyed by
// constKey: built at 6, or built at 10 and reloaded to 6 (how), for the
// tests of a middleware further out running a copy of "p" lowered from
// 10 to 6 (folded into the 10's state).
func innerAtSix(t *testing.T, store algorithms.Store, clock algorithms.Clock, how string, opts ...middleware.Option) *middleware.Middleware {
	t.Helper()
	limit := int64(6)
	if how == "reloaded to 6" {
		limit = 10
	}
	opts = append([]middleware.Option{middleware.WithClock(clock)}, opts...)
	in := middleware.MustNew(store, []*policy.Policy{fixed("p", limit, time.Minute, constKey)}, opts...)
	if how == "reloaded to 6" {
		if err := in.SetPolicies([]*policy.Policy{fixed("p", 6, time.Minute, constKey)}); err != nil {
			t.Fatal(err)
		}
	}
	return in
}
