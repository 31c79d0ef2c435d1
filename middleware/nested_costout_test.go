package middleware_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNestedCostOutOfRangeKeepsOuterFields: a request whose cost a policy
// of a middleware further in can never admit is answered 429 there
// without Retry-After (no wait admits it) and without that middleware's
// fields, but a middleware further out that admitted it, and counted it,
// has written its own: they stay, as true as on any response (the
// package documentation said the 429 carries no rate-limit fields). They
// parse, and the request's cost is counted in them. Through chi and a
// ServeMux, in every profile.
func TestNestedCostOutOfRangeKeepsOuterFields(t *testing.T) {
	cost := policy.WithCost(func(*http.Request) int64 { return 3 })
	for _, prof := range wireProfiles {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(fmt.Sprintf("%v/%s", prof, mux), func(t *testing.T) {
				store, clock := newStore(t)
				outer := middleware.MustNew(store, []*policy.Policy{fixed("outer", 5, time.Minute, constKey, cost)},
					middleware.WithHeaders(prof), middleware.WithClock(clock))
				inner := middleware.MustNew(store, []*policy.Policy{fixed("inner", 2, time.Minute, constKey, cost)},
					middleware.WithHeaders(prof), middleware.WithClock(clock))
				w := serve(nestedRouter(mux, outer, inner), "GET", "/")
				if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "" {
					t.Fatalf("%d, Retry-After %q; want 429 without one", w.Code, w.Header().Get("Retry-After"))
				}
				if err := checkWire(prof, w.Code, w.Result().Header, w.Body.Bytes(), "GET", clock.Now()); err != nil {
					t.Fatal(err)
				}
				got := map[middleware.Profile]string{
					middleware.IETF:       w.Header().Get("RateLimit"),
					middleware.Draft7:     w.Header().Get("RateLimit"),
					middleware.Draft6:     w.Header().Get("RateLimit-Remaining"),
					middleware.Legacy:     w.Header().Get("X-RateLimit-Remaining"),
					middleware.LegacyUnix: w.Header().Get("X-RateLimit-Remaining"),
				}[prof]
				want := map[middleware.Profile]string{
					middleware.IETF:       `"outer";r=2;t=60`,
					middleware.Draft7:     "limit=5, remaining=2, reset=60",
					middleware.Draft6:     "2",
					middleware.Legacy:     "2",
					middleware.LegacyUnix: "2",
				}[prof]
				if got != want {
					t.Errorf("the outer middleware's field %q, want %q", got, want)
				}
			})
		}
	}
}
