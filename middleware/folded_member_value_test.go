package middleware_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestFoldedOuterMemberKeepsItsCount: an enforcing middleware further out
// runs a policy (10 a minute, fixed window) lowered to 6 by SetLimit, on
// every route; one further in, on /in alone, runs the policy built at 6.
// A client uses 3 on /out, then requests /in: the one further out counts
// its fourth (2 left at 6), the one further in its first under its own 6
// (5 left there). The response reports the policy once, and no more left
// than the one further out will admit: r=2, as before the fold (where the
// copy further out counted under the 6 as well, and the one further in,
// meeting it as the same policy, left it out). The next two pass, the
// third is refused. Through chi, on the memory store and on Redis.
func TestFoldedOuterMemberKeepsItsCount(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, name := range storetest.Names {
		t.Run(name, func(t *testing.T) {
			clock := algotest.NewClock(t0.Add(10 * time.Second))
			store := storetest.New(t, name, clock)
			outer := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, constKey)}, middleware.WithClock(clock), quiet)
			setLimit(t, outer, "p", 6)
			inner := middleware.MustNew(store, []*policy.Policy{fixed("p", 6, time.Minute, constKey)}, middleware.WithClock(clock), quiet)
			r := chi.NewRouter()
			r.Use(outer.Handler)
			r.Get("/out", ok)
			r.With(inner.Handler).Get("/in", ok)
			for range 3 {
				if w := serve(r, "GET", "/out"); w.Code != http.StatusOK {
					t.Fatalf("/out: %d, want 200", w.Code)
				}
			}
			for i, want := range []string{`"p";r=2;t=50`, `"p";r=1;t=50`, `"p";r=0;t=50`} {
				w := serve(r, "GET", "/in")
				if rl := strings.Join(w.Header().Values("RateLimit"), "|"); w.Code != http.StatusOK || rl != want {
					t.Errorf("/in request %d: %d, RateLimit %q; want 200, %s", i+1, w.Code, rl, want)
				}
			}
			if w := serve(r, "GET", "/in"); w.Code != http.StatusTooManyRequests {
				t.Errorf("/in request 4: %d, want 429 (the 6 used further out)", w.Code)
			}
		})
	}
}

// TestFoldedShadowOuterMemberIsTheInnerCount: as
// TestFoldedOuterMemberKeepsItsCount, with the middleware further out in
// shadow mode: it enforces nothing, so the one further in, deciding p
// under its own 6 (whose state the shadow copy, folded into the 10, no
// longer counts in), admits 6 on /in after the 3 on /out, and its member
// reports its own count, r=5 down to 0, not the shadow one's (2 down to
// 0, then 0 while requests pass). Through chi, on the memory store and
// on Redis.
func TestFoldedShadowOuterMemberIsTheInnerCount(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, name := range storetest.Names {
		t.Run(name, func(t *testing.T) {
			clock := algotest.NewClock(t0.Add(10 * time.Second))
			store := storetest.New(t, name, clock)
			outer := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, constKey)},
				middleware.WithClock(clock), middleware.WithShadow(nil), quiet)
			setLimit(t, outer, "p", 6)
			inner := middleware.MustNew(store, []*policy.Policy{fixed("p", 6, time.Minute, constKey)}, middleware.WithClock(clock), quiet)
			r := chi.NewRouter()
			r.Use(outer.Handler)
			r.Get("/out", ok)
			r.With(inner.Handler).Get("/in", ok)
			for range 3 {
				serve(r, "GET", "/out")
			}
			for i := range 6 {
				w := serve(r, "GET", "/in")
				want := `"p";r=` + strconv.Itoa(5-i) + ";t=50"
				if rl := strings.Join(w.Header().Values("RateLimit"), "|"); w.Code != http.StatusOK || rl != want {
					t.Errorf("/in request %d: %d, RateLimit %q; want 200, %s", i+1, w.Code, rl, want)
				}
			}
			if w := serve(r, "GET", "/in"); w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "50" {
				t.Errorf("/in request 7: %d, Retry-After %q; want 429, 50", w.Code, w.Header().Get("Retry-After"))
			}
		})
	}
}
