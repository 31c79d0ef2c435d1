package middleware_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// nested3Router serves GET / with ok through outer, mid and inner: outer
// and mid as chi's r.Use and inner as r.With, or outer and mid around a
// ServeMux whose route holds inner.
func nested3Router(mux string, outer, mid, inner *middleware.Middleware) http.Handler {
	if mux == "chi" {
		r := chi.NewRouter()
		r.Use(outer.Handler, mid.Handler)
		r.With(inner.Handler).Get("/", ok)
		return r
	}
	sm := http.NewServeMux()
	sm.Handle("GET /", inner.Handler(ok))
	return outer.Handler(mid.Handler(sm))
}

// TestSharedGuardCountedOnceBehindShadowDenial: one policy (10 a minute)
// given to three nested middlewares: an enforcing one further out, at its
// configured 10; a shadow one in the middle at 8, which also has a policy
// of its own (1 a minute) and so denies, counting nothing, from the second
// request on; an enforcing one further in, at 8 too and guarded by the 10
// (lowered by SetLimit, or reloaded from 10 to 8). The one further in
// decides the 8 itself when the shadow one denied it, but the outer one
// counted the 10 already: its guard under the 10 must be left out, or
// every request counts twice there. Eight requests in a minute pass (the
// 8), the ninth is refused. It admitted 5: the guard dropped for the
// enforcing one further out was taken back because the shadow one in
// between denied its copy of the 8. Through chi and a ServeMux.
func TestSharedGuardCountedOnceBehindShadowDenial(t *testing.T) {
	for _, tt := range []struct {
		name   string
		mid    func(t *testing.T, m *middleware.Middleware) // the shadow one's copy at 8
		inner  func(t *testing.T, m *middleware.Middleware) // the inner one's guarded 8
		midAt8 bool                                         // the shadow one is configured at 8
	}{
		{
			name:   "inner lowered by SetLimit, shadow built at 8",
			midAt8: true,
			inner:  func(t *testing.T, m *middleware.Middleware) { setLimit(t, m, "p", 8) },
		},
		{
			name:  "inner lowered by SetLimit, shadow lowered by SetLimit",
			mid:   func(t *testing.T, m *middleware.Middleware) { setLimit(t, m, "p", 8) },
			inner: func(t *testing.T, m *middleware.Middleware) { setLimit(t, m, "p", 8) },
		},
		{
			name:   "inner reloaded from 10 to 8, shadow built at 8",
			midAt8: true,
			inner: func(t *testing.T, m *middleware.Middleware) {
				if err := m.SetPolicies([]*policy.Policy{fixed("p", 8, time.Minute, constKey)}); err != nil {
					t.Fatal(err)
				}
			},
		},
	} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(tt.name+"/"+mux, func(t *testing.T) {
				store, clock := newStore(t)
				quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
				outer := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, constKey)}, middleware.WithClock(clock), quiet)
				midLimit := int64(10)
				if tt.midAt8 {
					midLimit = 8
				}
				mid := middleware.MustNew(store, []*policy.Policy{fixed("p", midLimit, time.Minute, constKey), fixed("own", 1, time.Minute, constKey)},
					middleware.WithClock(clock), middleware.WithShadow(nil), quiet)
				inner := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, constKey)}, middleware.WithClock(clock), quiet)
				if tt.mid != nil {
					tt.mid(t, mid)
				}
				tt.inner(t, inner)
				if gs := inner.Set().Policy(0).Guards(); len(gs) != 1 || gs[0].Limit != 10 {
					t.Fatalf("inner guards %v, want the 10", gs)
				}
				h := nested3Router(mux, outer, mid, inner)
				clock.Advance(time.Second)
				if got := admittedOf(h, 9); got != 8 {
					t.Errorf("%d of 9 admitted in a minute, want 8 (the inner 8, each request counted once under the 10)", got)
				}
				ten := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, constKey)}, middleware.WithClock(clock))
				res, err := ten.Peek(httptest.NewRequest("GET", "/", nil))
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Decision(0).Remaining; got != 1 {
					t.Errorf("the 10 after 9 requests: %d left, want 1", got)
				}
			})
		}
	}
}

func setLimit(t *testing.T, m *middleware.Middleware, name string, limit int64) {
	t.Helper()
	if err := m.SetLimit(name, limit); err != nil {
		t.Fatal(err)
	}
}

// TestSharedPolicyShadowOuterRetryAfterThroughGuard: as
// TestSharedPolicyShadowOuterRetryAfter, a middleware further in enforces
// on the retry what a shadow one further out counted for it, here a
// guard: its copy of the policy (4 per 4 minutes) is at 3, lowered by
// SetLimit or reloaded from 4 to 3, and guarded by the 4 the shadow one
// runs, so that guard is left out (counted there) while the shadow one
// admits. When the shadow one admitted the request with the 4's last
// unit, a 429 further in for another policy (1 a minute) must wait for
// the 4 too (119 s): the retry at 59 s is denied by the shadow one, the
// copy at 3 is decided with its guard, and refuses it. The retry's wait
// matched the shadow one's policy to the copy at 3 by Spec alone, not
// through its guard: Retry-After was 59. With the refusing middleware
// holding the copy, or one in between (which then has no policy of the
// refusing one's), through chi and a ServeMux, on an injected clock.
func TestSharedPolicyShadowOuterRetryAfterThroughGuard(t *testing.T) {
	for _, how := range []string{"SetLimit", "reload"} {
		for _, between := range []bool{false, true} {
			for _, mux := range []string{"chi", "ServeMux"} {
				name := how + "/refusing one guarded/" + mux
				if between {
					name = how + "/one in between guarded/" + mux
				}
				t.Run(name, func(t *testing.T) {
					store, clock := newStore(t)
					start := time.Unix((t0.Unix()/240+1)*240, 0) // a four-minute boundary
					clock.Set(start)
					long := func(limit int64) *policy.Policy { return fixed("long", limit, 4*time.Minute, constKey) }
					minute := fixed("minute", 1, time.Minute, constKey)
					quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
					shadow := middleware.MustNew(store, []*policy.Policy{long(4)}, middleware.WithClock(clock), middleware.WithShadow(nil), quiet)
					var guarded *middleware.Middleware
					var h http.Handler
					if between {
						guarded = middleware.MustNew(store, []*policy.Policy{long(4)}, middleware.WithClock(clock), quiet)
						inner := middleware.MustNew(store, []*policy.Policy{minute}, middleware.WithClock(clock), quiet)
						h = nested3Router(mux, shadow, guarded, inner)
					} else {
						guarded = middleware.MustNew(store, []*policy.Policy{long(4), minute}, middleware.WithClock(clock), quiet)
						h = nestedRouter(mux, shadow, guarded)
					}
					// Two requests a minute apart: the shadow one counts
					// the 4 for both.
					for i := range 2 {
						if w := serve(h, "GET", "/"); w.Code != http.StatusOK {
							t.Fatalf("request %d: %d", i+1, w.Code)
						}
						clock.Advance(time.Minute)
					}
					switch how {
					case "SetLimit":
						setLimit(t, guarded, "long", 3)
					case "reload":
						ps := []*policy.Policy{long(3)}
						if !between {
							ps = append(ps, minute)
						}
						if err := guarded.SetPolicies(ps); err != nil {
							t.Fatal(err)
						}
					}
					if gs := guarded.Set().Policy(0).Guards(); len(gs) != 1 || gs[0].Limit != 4 {
						t.Fatalf("guards %v, want the 4", gs)
					}
					// The third takes the 4's third unit, the fourth its
					// last, refused for the minute.
					w := admitThenDeny(t, mux, h, clock)
					if got := w.Header().Get("Retry-After"); got != "119" {
						t.Errorf("Retry-After %q, want 119 (the 4's wait; RateLimit %q)", got, w.Header().Values("RateLimit"))
					}
					retryAdmittedAt(t, mux, h, clock, 119*time.Second)
				})
			}
		}
	}
}

// TestSharedPolicyShadowLoweredOuterRetryAfter: the reverse of
// TestSharedPolicyShadowOuterRetryAfterThroughGuard: the shadow middleware
// runs the shared policy (4 per 2 minutes) lowered to 2 by SetLimit,
// guarded by the 4 that the one further in runs, which leaves it out
// while the shadow one admits (counted there, under the guard). When the
// shadow one admitted the request with the 2's last unit, a 429 further in
// for another policy (1 a minute) waits for the 4 alone, which the one
// further in decides on the retry (the shadow one denies it at 2): the
// 4 holds 2 more, so 59 s, the other policy's wait. Through chi and a
// ServeMux, on an injected clock.
func TestSharedPolicyShadowLoweredOuterRetryAfter(t *testing.T) {
	for i, mux := range []string{"chi", "ServeMux"} {
		t.Run(mux, func(t *testing.T) {
			store, clock := newStore(t)
			clock.Set(t0.Add(time.Duration(4+4*i) * time.Minute)) // a two-minute boundary
			quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
			shadow := middleware.MustNew(store, []*policy.Policy{fixed("two-min", 4, 2*time.Minute, constKey)},
				middleware.WithClock(clock), middleware.WithShadow(nil), quiet)
			setLimit(t, shadow, "two-min", 2)
			inner := middleware.MustNew(store, []*policy.Policy{fixed("two-min", 4, 2*time.Minute, constKey), fixed("minute", 1, time.Minute, constKey)},
				middleware.WithClock(clock), quiet)
			h := nestedRouter(mux, shadow, inner)
			w := admitThenDeny(t, mux, h, clock)
			if got := w.Header().Get("Retry-After"); got != "59" {
				t.Errorf("Retry-After %q, want 59 (the minute's wait; RateLimit %q)", got, w.Header().Values("RateLimit"))
			}
			clock.Advance(59 * time.Second)
			if w := serve(h, "GET", "/"); w.Code != http.StatusOK {
				t.Errorf("retry at 59 s: %d, want 200", w.Code)
			}
		})
	}
}

// TestSharedPolicyShadowCopyKeepsInnerGuard: a shadow middleware further
// out runs a policy at 4 per 10 minutes (built so, with a policy of its
// own of 1 a minute); the one further in runs it at 10, and is then
// lowered to 4 by SetLimit (or reloaded from 10 to 4), guarded by its 10.
// The shadow one's 4 is the same state as the inner copy's own Spec, so
// the inner one leaves the policy out when the shadow one admits; but its
// guard, the 10, which the shadow one does not count, must still hold:
// a client that used the 10 before the change gets no more in its
// window, whatever the shadow one admits. Through chi and a ServeMux.
func TestSharedPolicyShadowCopyKeepsInnerGuard(t *testing.T) {
	for _, how := range []string{"SetLimit", "reload"} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(how+"/"+mux, func(t *testing.T) {
				store, clock := newStore(t)
				start := time.Unix((t0.Unix()/600+1)*600, 0) // a ten-minute boundary
				clock.Set(start)
				long := func(limit int64) *policy.Policy { return fixed("long", limit, 10*time.Minute, constKey) }
				quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
				shadow := middleware.MustNew(store, []*policy.Policy{long(4), fixed("own", 1, time.Minute, constKey)},
					middleware.WithClock(clock), middleware.WithShadow(nil), quiet)
				inner := middleware.MustNew(store, []*policy.Policy{long(10)}, middleware.WithClock(clock), quiet)
				h := nestedRouter(mux, shadow, inner)
				// The shadow one admits the first (its own 1 a minute),
				// and denies the next nine: the inner one counts all
				// ten under its 10.
				for i := range 10 {
					if w := serve(h, "GET", "/"); w.Code != http.StatusOK {
						t.Fatalf("request %d: %d", i+1, w.Code)
					}
					clock.Advance(time.Second)
				}
				switch how {
				case "SetLimit":
					setLimit(t, inner, "long", 4)
				case "reload":
					if err := inner.SetPolicies([]*policy.Policy{long(4)}); err != nil {
						t.Fatal(err)
					}
				}
				// A minute on each time, the shadow one admits (its own
				// 1 a minute, and its 4 of which 1 is used).
				for i := range 3 {
					clock.Advance(time.Minute)
					if w := serve(h, "GET", "/"); w.Code != http.StatusTooManyRequests {
						t.Errorf("minute %d after the 10 used: %d, want 429 (the inner one's guard, the 10, spent)", i+1, w.Code)
					}
				}
			})
		}
	}
}

// countingStore records, for each allowed Take, how many times it
// counted each state (namespaced key and limit: the policies here differ
// by limit alone).
type countingStore struct {
	algorithms.Store
	counted map[string]int
}

func (s *countingStore) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	ds, err := s.Store.Take(ctx, checks...)
	if err != nil {
		return ds, err
	}
	for _, d := range ds {
		if !d.Allowed {
			return ds, nil // all or nothing: nothing counted
		}
	}
	for _, c := range checks {
		s.counted[c.Key+"/"+strconv.FormatInt(c.Spec.Limit, 10)]++
	}
	return ds, nil
}

// TestSharedPolicyThreeNestedCountsEachStateOnce: one policy (10 a
// minute) given to three nested middlewares, each enforcing or in shadow
// mode (a shadow one with a policy of its own of 1 per 20 s, so that it
// denies, counting nothing, now and then), each running it as configured,
// lowered to 6 by SetLimit (guarded by the 10), reloaded from 10 to 6
// (guarded by the 10), or built at 6: all 512 mixes, 14 requests 4 s
// apart. No request may count a state twice (each policy counts once per
// request however the middlewares are nested), and every request
// admitted must be counted under the Spec of each enforcing middleware's
// copy, or, for a copy lowered by SetLimit, under the 10 its check is
// folded into (nested.Ops.Folded: the 10's state judged at 6 decides
// it, and nothing counts under its own 6 then, unless a middleware
// further out counted the 10). (That a guard of it is counted too is not
// checked here: see TestSharedPolicyShadowCopyKeepsInnerGuard.) The 10 was counted
// twice per request in 12 mixes where a shadow middleware's denied copy
// and an enforcing middleware's counted 10 met a guarded copy further in
// (TestSharedGuardCountedOnceBehindShadowDenial). Through chi and a
// ServeMux.
func TestSharedPolicyThreeNestedCountsEachStateOnce(t *testing.T) {
	copies := []string{"configured", "SetLimit", "reload", "built at 6"}
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, mux := range []string{"chi", "ServeMux"} {
		for mix := range 512 {
			var shadow [3]bool
			var kind [3]string
			name := mux + ":"
			for i := range 3 {
				x := mix >> (3 * i) & 7
				shadow[i], kind[i] = x >= 4, copies[x%4]
				mode := "enforcing"
				if shadow[i] {
					mode = "shadow"
				}
				name += " " + mode + "/" + kind[i]
			}
			mem, clock := newStore(t)
			store := &countingStore{Store: mem}
			var ms [3]*middleware.Middleware
			for i := range 3 {
				limit := int64(10)
				if kind[i] == "built at 6" {
					limit = 6
				}
				ps := []*policy.Policy{fixed("p", limit, time.Minute, constKey)}
				opts := []middleware.Option{middleware.WithClock(clock), quiet}
				if shadow[i] {
					ps = append(ps, fixed("own"+strconv.Itoa(i), 1, 20*time.Second, constKey))
					opts = append(opts, middleware.WithShadow(nil))
				}
				ms[i] = middleware.MustNew(store, ps, opts...)
				switch kind[i] {
				case "SetLimit":
					setLimit(t, ms[i], "p", 6)
				case "reload":
					ps[0] = fixed("p", 6, time.Minute, constKey)
					if err := ms[i].SetPolicies(ps); err != nil {
						t.Fatal(err)
					}
				}
			}
			h := nested3Router(mux, ms[0], ms[1], ms[2])
			var bad []string
			for r := range 14 {
				store.counted = map[string]int{}
				w := serve(h, "GET", "/")
				for k, n := range store.counted {
					if n > 1 {
						bad = append(bad, fmt.Sprintf("request %d counted %d times under %s", r+1, n, k))
					}
				}
				for i := range 3 {
					if w.Code != http.StatusOK || shadow[i] {
						continue
					}
					k := "p:k/" + strconv.FormatInt(ms[i].Set().Policy(0).Spec().Limit, 10)
					if kind[i] == "SetLimit" && store.counted["p:k/10"] > 0 {
						continue // folded into the 10
					}
					if store.counted[k] == 0 {
						bad = append(bad, fmt.Sprintf("request %d admitted, not counted under %s (middleware %d's)", r+1, k, i+1))
					}
				}
				clock.Advance(4 * time.Second)
			}
			if len(bad) > 0 {
				t.Errorf("%s: %s", name, strings.Join(bad, "; "))
			}
		}
	}
}
