package middleware_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNestedInnerTightenedHeadersTrue: an outer middleware on the whole
// router and an inner one on the route share a policy (20 a minute: one
// *policy.Policy, or two of one name and Spec), and the inner one is
// tightened to 4 (a reload, or SetLimit) after the client used 3. The
// inner copy is guarded by the 20, the very state the outer middleware
// counts, which it judges at 4 from the outer decision: it admits one
// more and refuses the next. The response reports the policy once, as
// the inner middleware decided it: the outer member (r=16, then r=15 on
// the 429) names the same policy and the same state at a limit not in
// force, and is not true (a 429 must show r=0 for the policy it
// violates). Likewise under a shadow outer middleware, and in the draft
// -07 RateLimit-Policy list; the single-valued profiles report the lowest
// remaining. A policy of another name in the outer middleware (its own
// state) keeps its member. Through chi and a ServeMux, on the memory
// store and on Redis.
func TestNestedInnerTightenedHeadersTrue(t *testing.T) {
	reload := func(t *testing.T, inner *middleware.Middleware) {
		t.Helper()
		if err := inner.SetPolicies([]*policy.Policy{fixed("p", 4, time.Minute, remote)}); err != nil {
			t.Fatal(err)
		}
	}
	lower := func(t *testing.T, inner *middleware.Middleware) { setLimit(t, inner, "p", 4) }
	// One policy named p: after the change, 4 of the 20 used.
	onePolicy := map[middleware.Profile][2]map[string]string{
		middleware.IETF: {
			{"RateLimit": `"p";r=0;t=60`, "RateLimit-Policy": `"p";q=4;w=60`},
			{"RateLimit": `"p";r=0;t=60`, "RateLimit-Policy": `"p";q=4;w=60`, "Retry-After": "60"},
		},
		middleware.Draft7: {
			{"RateLimit": `limit=4, remaining=0, reset=60`, "RateLimit-Policy": `4;w=60`},
			{"RateLimit": `limit=4, remaining=0, reset=60`, "RateLimit-Policy": `4;w=60`, "Retry-After": "60"},
		},
		middleware.Legacy: {
			{"X-RateLimit-Limit": "4", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "60"},
			{"X-RateLimit-Limit": "4", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "60", "Retry-After": "60"},
		},
	}
	cases := []struct {
		name   string
		outer  *policy.Policy
		inner  func(outer *policy.Policy) *policy.Policy
		shadow bool // the outer middleware
		change func(t *testing.T, inner *middleware.Middleware)
		want   map[middleware.Profile][2]map[string]string
	}{
		{name: "shared policy, inner reloaded", outer: fixed("p", 20, time.Minute, remote),
			inner:  func(p *policy.Policy) *policy.Policy { return p },
			change: reload, want: onePolicy},
		{name: "one name and Spec built twice, inner reloaded", outer: fixed("p", 20, time.Minute, remote),
			inner:  func(*policy.Policy) *policy.Policy { return fixed("p", 20, time.Minute, remote) },
			change: reload, want: onePolicy},
		{name: "shared policy, inner lowered by SetLimit", outer: fixed("p", 20, time.Minute, remote),
			inner:  func(p *policy.Policy) *policy.Policy { return p },
			change: lower, want: onePolicy},
		{name: "shared policy, shadow outer, inner reloaded", outer: fixed("p", 20, time.Minute, remote),
			inner:  func(p *policy.Policy) *policy.Policy { return p },
			shadow: true, change: reload, want: onePolicy},
		{name: "another name outside, inner reloaded", outer: fixed("o", 20, time.Minute, remote),
			inner:  func(*policy.Policy) *policy.Policy { return fixed("p", 20, time.Minute, remote) },
			change: reload, want: map[middleware.Profile][2]map[string]string{
				middleware.IETF: {
					{"RateLimit": `"o";r=16;t=60 | "p";r=0;t=60`, "RateLimit-Policy": `"o";q=20;w=60 | "p";q=4;w=60`},
					// The outer middleware admitted, and counted, the
					// request the inner one refuses.
					{"RateLimit": `"o";r=15;t=60 | "p";r=0;t=60`, "RateLimit-Policy": `"o";q=20;w=60 | "p";q=4;w=60`, "Retry-After": "60"},
				},
				middleware.Draft7: {
					{"RateLimit": `limit=4, remaining=0, reset=60`, "RateLimit-Policy": `20;w=60 | 4;w=60`},
					{"RateLimit": `limit=4, remaining=0, reset=60`, "RateLimit-Policy": `20;w=60 | 4;w=60`, "Retry-After": "60"},
				},
				middleware.Legacy: onePolicy[middleware.Legacy],
			}},
	}
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, name := range storetest.Names {
		for _, tc := range cases {
			for _, prof := range []middleware.Profile{middleware.IETF, middleware.Draft7, middleware.Legacy} {
				for _, mux := range []string{"chi", "ServeMux"} {
					t.Run(fmt.Sprintf("%s/%s/%v/%s", name, tc.name, prof, mux), func(t *testing.T) {
						clock := algotest.NewClock(t0)
						store := storetest.New(t, name, clock)
						opts := []middleware.Option{middleware.WithClock(clock), middleware.WithHeaders(prof), quiet}
						outerOpts := opts
						if tc.shadow {
							outerOpts = append(opts[:len(opts):len(opts)], middleware.WithShadow(nil))
						}
						outer := middleware.MustNew(store, []*policy.Policy{tc.outer}, outerOpts...)
						inner := middleware.MustNew(store, []*policy.Policy{tc.inner(tc.outer)}, opts...)
						h := nestedRouter(mux, outer, inner)
						if got := admittedOf(h, 3); got != 3 {
							t.Fatalf("before the change: %d of 3 admitted", got)
						}
						tc.change(t, inner)
						for i, status := range []int{http.StatusOK, http.StatusTooManyRequests} {
							w := serve(h, "GET", "/")
							if w.Code != status {
								t.Errorf("request %d after the change: %d, want %d (%v)", i+1, w.Code, status, w.Header())
							}
							for k, want := range tc.want[prof][i] {
								if got := strings.Join(w.Header().Values(k), " | "); got != want {
									t.Errorf("request %d after the change (%d): %s = %q, want %q", i+1, w.Code, k, got, want)
								}
							}
						}
					})
				}
			}
		}
	}
}
