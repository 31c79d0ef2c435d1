package middleware_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestSharedPolicyShadowDenialListedOnceAcrossCopies: a policy given to
// two nested middlewares need not be the same *policy.Policy in both: a
// copy lowered by SetLimit (guarded by the configured Spec), a copy a
// reload tightened (guarded by the Spec it replaced: each middleware
// guards its own), or the same policy built twice (two middlewares
// configured from one file). The middleware further in finds it by name,
// key and Spec or guard (see ErrCountedTwice), and decides it again when
// the one further out, in shadow mode, denied it and counted nothing:
// its member, which reports the state that was counted and is enforced,
// must replace the shadow one's (TestSharedPolicyShadowDenialListedOnce).
// The shadow one's member was matched by pointer, so it stayed: the
// response listed the policy twice, in RateLimit and RateLimit-Policy,
// the two members disagreeing when the limits differ. Through chi and a
// ServeMux, on an injected clock, one request a second from a minute's
// start.
func TestSharedPolicyShadowDenialListedOnceAcrossCopies(t *testing.T) {
	for _, tt := range []struct {
		name         string
		outer, inner []*policy.Policy                                        // of the outer (shadow) and the inner middleware
		change       func(t *testing.T, outer, inner *middleware.Middleware) // once both are built
		requests     int                                                     // the last one is checked
		status       int                                                     // of the last request
		rateLimit    string                                                  // the RateLimit lines of the last response, joined by " | "
		policies     string                                                  // its RateLimit-Policy lines, joined by " | "
	}{
		{
			// Five counted by the shadow one; the sixth it denies,
			// and the inner one refuses.
			name:      "one Spec built twice",
			outer:     []*policy.Policy{fixed("per-min", 5, time.Minute, constKey)},
			inner:     []*policy.Policy{fixed("per-min", 5, time.Minute, constKey)},
			requests:  6,
			status:    http.StatusTooManyRequests,
			rateLimit: `"per-min";r=0;t=55`,
			policies:  `"per-min";q=5;w=60`,
		},
		{
			// The shadow one runs it at 3, guarded by the 5 the
			// inner one counts under: three counted there; the
			// fourth it denies, and the inner one admits (4 of 5).
			name:  "outer lowered by SetLimit",
			outer: []*policy.Policy{fixed("per-min", 5, time.Minute, constKey)},
			inner: []*policy.Policy{fixed("per-min", 5, time.Minute, constKey)},
			change: func(t *testing.T, outer, _ *middleware.Middleware) {
				if err := outer.SetLimit("per-min", 3); err != nil {
					t.Fatal(err)
				}
			},
			requests:  4,
			status:    http.StatusOK,
			rateLimit: `"per-min";r=1;t=57`,
			policies:  `"per-min";q=5;w=60`,
		},
		{
			// The inner one runs it at 3, guarded by the 5 the
			// shadow one counts: five counted there (the inner one
			// refuses the fourth and fifth at 3); the sixth the
			// shadow one denies, and the inner one refuses under
			// both.
			name:  "inner lowered by SetLimit",
			outer: []*policy.Policy{fixed("per-min", 5, time.Minute, constKey)},
			inner: []*policy.Policy{fixed("per-min", 5, time.Minute, constKey)},
			change: func(t *testing.T, _, inner *middleware.Middleware) {
				if err := inner.SetLimit("per-min", 3); err != nil {
					t.Fatal(err)
				}
			},
			requests:  6,
			status:    http.StatusTooManyRequests,
			rateLimit: `"per-min";r=0;t=55`,
			policies:  `"per-min";q=3;w=60`,
		},
		{
			// Both reloaded from 10 to 5: each guards its own copy.
			name:  "reloaded tighter in both",
			outer: []*policy.Policy{fixed("per-min", 10, time.Minute, constKey)},
			inner: []*policy.Policy{fixed("per-min", 10, time.Minute, constKey)},
			change: func(t *testing.T, outer, inner *middleware.Middleware) {
				five := fixed("per-min", 5, time.Minute, constKey)
				for _, m := range []*middleware.Middleware{outer, inner} {
					if err := m.SetPolicies([]*policy.Policy{five}); err != nil {
						t.Fatal(err)
					}
				}
			},
			requests:  6,
			status:    http.StatusTooManyRequests,
			rateLimit: `"per-min";r=0;t=55`,
			policies:  `"per-min";q=5;w=60`,
		},
		{
			// The shadow one reloaded from 10 to 5, guarded by the
			// 10 the inner one counts under: five counted; the
			// sixth it denies, and the inner one admits (6 of 10).
			name:  "outer reloaded tighter",
			outer: []*policy.Policy{fixed("per-min", 10, time.Minute, constKey)},
			inner: []*policy.Policy{fixed("per-min", 10, time.Minute, constKey)},
			change: func(t *testing.T, outer, _ *middleware.Middleware) {
				if err := outer.SetPolicies([]*policy.Policy{fixed("per-min", 5, time.Minute, constKey)}); err != nil {
					t.Fatal(err)
				}
			},
			requests:  6,
			status:    http.StatusOK,
			rateLimit: `"per-min";r=4;t=55`,
			policies:  `"per-min";q=10;w=60`,
		},
		{
			// The inner one reloaded from 10 to 5, guarded by the 10
			// the shadow one counts: ten counted there; the
			// eleventh the shadow one denies, and the inner one
			// refuses under both.
			name:  "inner reloaded tighter",
			outer: []*policy.Policy{fixed("per-min", 10, time.Minute, constKey)},
			inner: []*policy.Policy{fixed("per-min", 10, time.Minute, constKey)},
			change: func(t *testing.T, _, inner *middleware.Middleware) {
				if err := inner.SetPolicies([]*policy.Policy{fixed("per-min", 5, time.Minute, constKey)}); err != nil {
					t.Fatal(err)
				}
			},
			requests:  11,
			status:    http.StatusTooManyRequests,
			rateLimit: `"per-min";r=0;t=50`,
			policies:  `"per-min";q=5;w=60`,
		},
	} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(tt.name+"/"+mux, func(t *testing.T) {
				store, clock := newStore(t)
				quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
				outer := middleware.MustNew(store, tt.outer, middleware.WithClock(clock), middleware.WithShadow(nil), quiet)
				inner := middleware.MustNew(store, tt.inner, middleware.WithClock(clock), quiet)
				if tt.change != nil {
					tt.change(t, outer, inner)
				}
				w := serveEverySecond(nestedRouter(mux, outer, inner), clock, tt.requests)
				checkIETFLines(t, w, tt.status, tt.rateLimit, tt.policies)
			})
		}
	}
}

// TestSharedPolicyShadowOuterRetryAfterAcrossCopies: as
// TestSharedPolicyShadowOuterRetryAfter, a middleware further in that left
// a shared policy out because one in shadow mode further out counted it
// enforces that policy on the retry, so its 429 for another policy waits
// for the shared one too (119 s, not the other's 59), when the shared
// policy is not the same *policy.Policy in both: built twice, or reloaded
// tighter in both (each guards its own copy). The retry's wait matched
// the shadow one's policy to those left out by pointer, and so waited
// for the other policy alone: 59 s, when the shared policy, full until
// 120 s, refuses the retry again.
// Through chi and a ServeMux, on an injected clock.
func TestSharedPolicyShadowOuterRetryAfterAcrossCopies(t *testing.T) {
	for _, reload := range []bool{false, true} {
		for i, mux := range []string{"chi", "ServeMux"} {
			name := "built twice/" + mux
			if reload {
				name = "reloaded tighter in both/" + mux
			}
			t.Run(name, func(t *testing.T) {
				store, clock := newStore(t)
				clock.Set(t0.Add(time.Duration(4+4*i) * time.Minute)) // a two-minute boundary
				limit := int64(2)
				if reload {
					limit = 4
				}
				quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
				outer := middleware.MustNew(store, []*policy.Policy{fixed("two-min", limit, 2*time.Minute, constKey)},
					middleware.WithClock(clock), middleware.WithShadow(nil), quiet)
				inner := middleware.MustNew(store, []*policy.Policy{fixed("two-min", limit, 2*time.Minute, constKey), fixed("minute", 1, time.Minute, constKey)},
					middleware.WithClock(clock), quiet)
				if reload {
					two := fixed("two-min", 2, 2*time.Minute, constKey)
					if err := outer.SetPolicies([]*policy.Policy{two}); err != nil {
						t.Fatal(err)
					}
					if err := inner.SetPolicies([]*policy.Policy{two, fixed("minute", 1, time.Minute, constKey)}); err != nil {
						t.Fatal(err)
					}
				}
				h := nestedRouter(mux, outer, inner)
				w := admitThenDeny(t, mux, h, clock)
				if got := w.Header().Get("Retry-After"); got != "119" {
					t.Errorf("Retry-After %q, want 119 (the shared policy's wait; RateLimit %q)", got, w.Header().Values("RateLimit"))
				}
				retryAdmittedAt(t, mux, h, clock, 119*time.Second)
			})
		}
	}
}
