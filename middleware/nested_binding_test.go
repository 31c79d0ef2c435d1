package middleware_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNestedBindingMemberReported: copies of one policy p (a fixed
// window of a minute, keyed alike) in nested middlewares, the copy
// further in more generous than the one further out, which binds: its
// member of p must be reported as it is in force (its q, and r the
// room it leaves), not replaced by the member further in, which merges
// the decision further out into its r but kept its own q (q=8 and r=2
// of the 3 further out, say), nor by one that reports room the copy
// further out does not give. The response reports p once (one IETF
// member, RateLimit-Policy "p";q=3;w=60 and RateLimit "p";r=2, 1, 0 as
// requests come, then a 429 with r=0, Retry-After 50 and t=50, 10 s into
// the minute); under draft -07 the RateLimit-Policy list holds the
// member the RateLimit field's limit names. Through chi and a ServeMux,
// on the memory store and on Redis.
//
//   - An inner copy raised further in: the outer one lowered by
//     SetLimit from 5 to 3 (checked on the 5's counters at 3), the inner
//     one configured at 3 and raised by SetLimit to 5, whose Spec is the
//     5 the outer one folded; it merged the 3's decision into its own
//     and wrote "p";q=5 over the outer "p";q=3, with r=2 of 3.
//   - The outer copy lowered below the inner one by reloads: the outer
//     one configured at 8 and reloaded to 3 (guarded by the 8), the
//     inner one configured at 5 and reloaded to 8 (guarded by the 5),
//     which counts under the 8 the outer one counts as its guard: it
//     wrote "p";q=8 with the 3's r over the outer "p";q=3.
//   - The same, the outer one reloaded to 3 after two requests (both
//     at 8 before, one member): the third request reported "p";q=8
//     with the 3's r=0.
//   - Three middlewares: the outer one configured at 3 and raised by
//     SetLimit to 8 (on the 3's counters), the middle one configured at
//     3, which leaves p out and restates the outer member at its 3
//     (r=2), the inner one configured at 8, the Spec of the raised
//     copy, which it decides: its member "p";q=8;r=7 replaced the
//     restated one, reporting 5 more than the middle one admits.
//   - Three middlewares: the outer one configured at 8 and lowered by
//     SetLimit to 5, the middle one configured at 3 and raised to 8 (the
//     outer one's Spec, which it counts under its 3 alone), the inner
//     one configured at 3, which restates the middle member at its 3:
//     under draft -07 the middle one's member gives way to the outer
//     5's (the lower), and the restating must then add its 3 (it found
//     no member to replace: list "5;w=60" beside limit=3, at the first
//     version of the fix above; main passes this case).
//   - Three middlewares: the outer one configured at 3 and raised by
//     SetLimit to 5, the middle one configured at 5, which decides it
//     (the Spec the outer one folded) and replaces the outer member,
//     the inner one configured at 5 and lowered by SetLimit to 3, which
//     leaves p out (the outer one counted its 3) and restates the outer
//     member at 3: gone, replaced by the middle one's, which stood
//     ("p";q=5;r=4 where 2 are left).
func TestNestedBindingMemberReported(t *testing.T) {
	reload := func(t *testing.T, m *middleware.Middleware, limit int64) {
		t.Helper()
		if err := m.SetPolicies([]*policy.Policy{fixed("p", limit, time.Minute, constKey)}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name   string
		limits []int64 // as configured, outermost first
		before int     // requests served before the change
		change func(t *testing.T, ms []*middleware.Middleware)
	}{
		{
			name:   "inner raised over the outer lowered",
			limits: []int64{5, 3},
			change: func(t *testing.T, ms []*middleware.Middleware) {
				setLimit(t, ms[0], "p", 3)
				setLimit(t, ms[1], "p", 5)
			},
		},
		{
			name:   "outer reloaded below the inner reloaded up",
			limits: []int64{8, 5},
			change: func(t *testing.T, ms []*middleware.Middleware) {
				reload(t, ms[1], 8)
				reload(t, ms[0], 3)
			},
		},
		{
			// Both at 8 after the inner reload (one member, 6 left
			// after two requests); the outer reload to 3 then binds.
			name:   "outer reloaded below the inner after two requests",
			limits: []int64{8, 5},
			before: 2,
			change: func(t *testing.T, ms []*middleware.Middleware) { reload(t, ms[0], 3) },
		},
		{
			name:   "outer raised, middle holds it, inner at the raised Spec",
			limits: []int64{3, 3, 8},
			change: func(t *testing.T, ms []*middleware.Middleware) { setLimit(t, ms[0], "p", 8) },
		},
		{
			name:   "outer lowered, middle raised over it, inner at the middle's configured",
			limits: []int64{8, 3, 3},
			change: func(t *testing.T, ms []*middleware.Middleware) {
				setLimit(t, ms[0], "p", 5)
				setLimit(t, ms[1], "p", 8)
			},
		},
		{
			name:   "outer raised, middle at the raised Spec, inner lowered to the outer's",
			limits: []int64{3, 5, 5},
			change: func(t *testing.T, ms []*middleware.Middleware) {
				setLimit(t, ms[0], "p", 5)
				setLimit(t, ms[2], "p", 3)
			},
		},
	}
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, name := range storetest.Names {
		for _, tc := range cases {
			for _, prof := range []middleware.Profile{middleware.IETF, middleware.Draft7} {
				for _, mux := range []string{"chi", "ServeMux"} {
					t.Run(fmt.Sprintf("%s/%s/%v/%s", name, tc.name, prof, mux), func(t *testing.T) {
						clock := algotest.NewClock(t0.Add(10 * time.Second))
						store := storetest.New(t, name, clock)
						var ms []*middleware.Middleware
						for _, l := range tc.limits {
							ms = append(ms, middleware.MustNew(store, []*policy.Policy{fixed("p", l, time.Minute, constKey)},
								middleware.WithClock(clock), quiet, middleware.WithHeaders(prof)))
						}
						var h http.Handler
						if len(ms) == 2 {
							h = nestedRouter(mux, ms[0], ms[1])
						} else {
							h = nested3Router(mux, ms[0], ms[1], ms[2])
						}
						if tc.before > 0 {
							reload(t, ms[1], 8)
							if got := admittedOf(h, tc.before); got != tc.before {
								t.Fatalf("before the change: %d of %d admitted", got, tc.before)
							}
						}
						tc.change(t, ms)
						const limit = 3
						for used := tc.before + 1; used <= limit+1; used++ {
							w := serve(h, "GET", "/")
							code, left := http.StatusOK, limit-used
							if left < 0 {
								code, left = http.StatusTooManyRequests, 0
							}
							if w.Code != code {
								t.Errorf("request %d: %d, want %d", used, w.Code, code)
							}
							if code == http.StatusTooManyRequests && w.Header().Get("Retry-After") != "50" {
								t.Errorf("request %d: Retry-After %q, want 50", used, w.Header().Get("Retry-After"))
							}
							if prof == middleware.Draft7 {
								rl := w.Header().Get("RateLimit")
								if want := "limit=3, remaining=" + strconv.Itoa(left) + ", reset=50"; rl != want {
									t.Errorf("request %d: RateLimit %q, want %q", used, rl, want)
								}
								if pol := strings.Join(w.Header().Values("RateLimit-Policy"), ", "); !hasListMember(pol, "3;w=60") {
									t.Errorf("request %d: RateLimit-Policy %q has no member 3;w=60, which RateLimit's limit=3 names", used, pol)
								}
								continue
							}
							want := map[string]string{
								"RateLimit-Policy": `"p";q=3;w=60`,
								"RateLimit":        `"p";r=` + strconv.Itoa(left) + `;t=50`,
							}
							for k, v := range want {
								if got := strings.Join(w.Header().Values(k), " | "); got != v {
									t.Errorf("request %d (%d): %s %q, want %q", used, w.Code, k, got, v)
								}
							}
						}
					})
				}
			}
		}
	}
}

// hasListMember reports whether the list line (members joined by ", ")
// holds m.
func hasListMember(line, m string) bool {
	for x := range strings.SplitSeq(line, ", ") {
		if x == m {
			return true
		}
	}
	return false
}
