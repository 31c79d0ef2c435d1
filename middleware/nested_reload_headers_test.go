package middleware_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
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
// -06/-07 RateLimit-Policy list; the single-valued profiles report the
// lowest remaining. A policy of another name in the outer middleware (its own
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
		middleware.Draft6: {
			{"RateLimit-Limit": "4", "RateLimit-Remaining": "0", "RateLimit-Reset": "60", "RateLimit-Policy": `4;w=60`},
			{"RateLimit-Limit": "4", "RateLimit-Remaining": "0", "RateLimit-Reset": "60", "RateLimit-Policy": `4;w=60`, "Retry-After": "60"},
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
				middleware.Draft6: {
					{"RateLimit-Limit": "4", "RateLimit-Remaining": "0", "RateLimit-Policy": `20;w=60 | 4;w=60`},
					{"RateLimit-Limit": "4", "RateLimit-Remaining": "0", "RateLimit-Policy": `20;w=60 | 4;w=60`, "Retry-After": "60"},
				},
				middleware.Legacy: onePolicy[middleware.Legacy],
			}},
	}
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, name := range storetest.Names {
		for _, tc := range cases {
			for _, prof := range []middleware.Profile{middleware.IETF, middleware.Draft7, middleware.Draft6, middleware.Legacy} {
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

// TestNestedInnerBucketTightenedHeadersTrue: as
// TestNestedInnerTightenedHeadersTrue, for a token_bucket and a
// leaky_bucket of 20 a minute whose burst a reload of the inner
// middleware lowers to 10. Such a guard is judged at its own limit: the
// inner middleware decides its lowered Spec alone (fresh, 10 left), the
// guard counted by the outer one. The response reports the policy once,
// as the inner middleware decided it with the outer decision of the
// guard merged in: a client that used 15 of the 20 has 4 left (not the
// inner 9, nor the outer 4 beside it), then refused by the outer
// middleware; one that used 3 has 9, 8, down to 0, then the inner 429
// shows r=0 alone (not the outer r=6 beside it). One token comes back
// every 3 s: t=3, Retry-After 3. Through chi and a ServeMux, on the
// memory store and on Redis.
func TestNestedInnerBucketTightenedHeadersTrue(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, name := range storetest.Names {
		for _, kind := range []algorithms.Kind{algorithms.TokenBucket, algorithms.LeakyBucket} {
			for _, used := range []int{3, 15} {
				for _, mux := range []string{"chi", "ServeMux"} {
					t.Run(fmt.Sprintf("%s/%s/%d used/%s", name, kind, used, mux), func(t *testing.T) {
						clock := algotest.NewClock(t0)
						store := storetest.New(t, name, clock)
						spec := algorithms.Spec{Algorithm: kind, Limit: 20, Window: time.Minute}
						p := policy.Must(policy.New("p", spec, remote))
						outer := middleware.MustNew(store, []*policy.Policy{p}, middleware.WithClock(clock), quiet)
						inner := middleware.MustNew(store, []*policy.Policy{p}, middleware.WithClock(clock), quiet)
						h := nestedRouter(mux, outer, inner)
						if got := admittedOf(h, used); got != used {
							t.Fatalf("before the reload: %d of %d admitted", got, used)
						}
						spec.Burst = 10
						if err := inner.SetPolicies([]*policy.Policy{policy.Must(policy.New("p", spec, remote))}); err != nil {
							t.Fatal(err)
						}
						left := min(20-used, 10)
						for i := range left {
							w := serve(h, "GET", "/")
							want := `"p";r=` + strconv.Itoa(left-1-i) + `;t=3`
							if got := strings.Join(w.Header().Values("RateLimit"), " | "); w.Code != http.StatusOK || got != want {
								t.Fatalf("request %d after the reload: %d, RateLimit %q; want 200, %q", i+1, w.Code, got, want)
							}
							if got := strings.Join(w.Header().Values("RateLimit-Policy"), " | "); got != `"p";q=10;w=60` {
								t.Errorf("request %d after the reload: RateLimit-Policy %q, want %q", i+1, got, `"p";q=10;w=60`)
							}
						}
						w := serve(h, "GET", "/")
						if got := strings.Join(w.Header().Values("RateLimit"), " | "); w.Code != http.StatusTooManyRequests ||
							got != `"p";r=0;t=3` || w.Header().Get("Retry-After") != "3" {
							t.Errorf("request %d after the reload: %d, RateLimit %q, Retry-After %q; want 429, %q, 3",
								left+1, w.Code, got, w.Header().Get("Retry-After"), `"p";r=0;t=3`)
						}
					})
				}
			}
		}
	}
}

// TestNestedInnerTightenedRetryAfterLargest: the inner middleware of
// TestNestedInnerTightenedHeadersTrue has a second policy, 4 an hour, of
// its own; the reload tightens the shared one to 4 a minute. After 3
// requests before it and one after, the next violates both: its
// Retry-After is the larger wait (the hour's end), its members r=0 for
// both, the outer member of the shared one gone; the single-valued
// profiles report the policy whose allowance takes longer to come back
// (a tie of remaining), its reset the Retry-After. Through chi and a
// ServeMux.
func TestNestedInnerTightenedRetryAfterLargest(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	hourLeft := strconv.FormatInt(3600-t0.Unix()%3600, 10)
	for _, prof := range []middleware.Profile{middleware.IETF, middleware.Legacy} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(fmt.Sprintf("%v/%s", prof, mux), func(t *testing.T) {
				store, clock := newStore(t)
				p := fixed("p", 20, time.Minute, remote)
				hour := fixed("hour", 4, time.Hour, remote)
				opts := []middleware.Option{middleware.WithClock(clock), middleware.WithHeaders(prof), quiet}
				outer := middleware.MustNew(store, []*policy.Policy{p}, opts...)
				inner := middleware.MustNew(store, []*policy.Policy{p, hour}, opts...)
				h := nestedRouter(mux, outer, inner)
				if got := admittedOf(h, 3); got != 3 {
					t.Fatalf("before the reload: %d of 3 admitted", got)
				}
				if err := inner.SetPolicies([]*policy.Policy{fixed("p", 4, time.Minute, remote), hour}); err != nil {
					t.Fatal(err)
				}
				if w := serve(h, "GET", "/"); w.Code != http.StatusOK {
					t.Fatalf("the 4th: %d", w.Code)
				}
				w := serve(h, "GET", "/")
				want := map[string]string{"Retry-After": hourLeft}
				switch prof {
				case middleware.IETF:
					want["RateLimit"] = `"p";r=0;t=60, "hour";r=0;t=` + hourLeft
					want["RateLimit-Policy"] = `"p";q=4;w=60, "hour";q=4;w=3600`
				case middleware.Legacy:
					want["X-RateLimit-Limit"] = "4"
					want["X-RateLimit-Remaining"] = "0"
					want["X-RateLimit-Reset"] = hourLeft
				}
				if w.Code != http.StatusTooManyRequests {
					t.Errorf("the 5th: %d, want 429", w.Code)
				}
				for k, v := range want {
					if got := strings.Join(w.Header().Values(k), " | "); got != v {
						t.Errorf("the 5th: %s = %q, want %q", k, got, v)
					}
				}
			})
		}
	}
}
