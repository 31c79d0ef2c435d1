package middleware_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestSharedPolicyCopyKeepsGuardListedOnce: a middleware further out
// (enforcing or in shadow mode) runs a policy at 4 per 10 minutes; the
// one further in runs it at 10 lowered to 4 by SetLimit, guarded by its
// 10, of which 2 were used before. The one further in leaves the 4 out
// (counted further out) and decides the request under the 10 alone,
// judged at 4 (see nested.Ops.DropOwn, policy.Policy.GuardLimit). The
// response lists the policy once in its IETF lines, with q=4 and the
// lower of the two states' remaining: 1, then 0, then a 429 for the 10
// holding 4 (the 4 has 1 left), its t the Retry-After.
// (The policy was listed twice, the inner member "long";r=9 above its
// q=4 when the 10 was fresh.) Through chi and a ServeMux.
func TestSharedPolicyCopyKeepsGuardListedOnce(t *testing.T) {
	for _, shadow := range []bool{false, true} {
		for _, mux := range []string{"chi", "ServeMux"} {
			mode := "enforcing"
			if shadow {
				mode = "shadow"
			}
			t.Run(mode+"/"+mux, func(t *testing.T) {
				store, clock := newStore(t)
				clock.Set(time.Unix((t0.Unix()/600+1)*600, 0)) // a ten-minute boundary
				long := func(limit int64) *policy.Policy { return fixed("long", limit, 10*time.Minute, constKey) }
				quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
				before := middleware.MustNew(store, []*policy.Policy{long(10)}, middleware.WithClock(clock))
				for range 2 {
					serve(before.Handler(ok), "GET", "/")
				}
				opts := []middleware.Option{middleware.WithClock(clock), quiet}
				if shadow {
					opts = append(opts, middleware.WithShadow(nil))
				}
				outer := middleware.MustNew(store, []*policy.Policy{long(4)}, opts...)
				inner := middleware.MustNew(store, []*policy.Policy{long(10)}, middleware.WithClock(clock), quiet)
				setLimit(t, inner, "long", 4)
				h := nestedRouter(mux, outer, inner)
				for i, want := range []struct {
					code              int
					policy, rateLimit string
					retryAfter        string
				}{
					{200, `"long";q=4;w=600`, `"long";r=1;t=600`, ""},
					{200, `"long";q=4;w=600`, `"long";r=0;t=599`, ""},
					{429, `"long";q=4;w=600`, `"long";r=0;t=598`, "598"},
				} {
					w := serve(h, "GET", "/")
					pol := strings.Join(w.Header().Values("RateLimit-Policy"), ", ")
					rl := strings.Join(w.Header().Values("RateLimit"), ", ")
					if w.Code != want.code || pol != want.policy || rl != want.rateLimit || w.Header().Get("Retry-After") != want.retryAfter {
						t.Errorf("request %d: %d, RateLimit-Policy %q, RateLimit %q, Retry-After %q; want %d, %q, %q, %q",
							i+1, w.Code, pol, rl, w.Header().Get("Retry-After"), want.code, want.policy, want.rateLimit, want.retryAfter)
					}
					clock.Advance(time.Second)
				}
			})
		}
	}
}
