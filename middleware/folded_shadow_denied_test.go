package middleware_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestFoldedShadowDeniedMemberReplaced: a middleware in shadow mode
// further out runs a policy (10 a minute, fixed window) lowered to 6 by
// SetLimit, its check folded into the 10's, beside a policy of its own
// (1 a minute) that makes it deny from the second request on, counting
// nothing; an enforcing middleware further in runs the policy built at 6
// (or reloaded from 10 to 6), which it decides itself. The response
// reports the policy once, as decided further in, whether the shadow one
// admitted the request or denied it, as it did before the fold (where
// the shadow one's copy counted under the 6 and was met further in as
// the same policy). Through chi and a ServeMux, on the memory store and
// on Redis.
func TestFoldedShadowDeniedMemberReplaced(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, name := range storetest.Names {
		for _, inner := range []string{"built at 6", "reloaded to 6"} {
			for _, mux := range []string{"chi", "ServeMux"} {
				t.Run(name+"/"+inner+"/"+mux, func(t *testing.T) {
					clock := algotest.NewClock(t0.Add(10 * time.Second))
					store := storetest.New(t, name, clock)
					outer := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Minute, constKey), fixed("own", 1, time.Minute, constKey)},
						middleware.WithClock(clock), middleware.WithShadow(nil), quiet)
					setLimit(t, outer, "p", 6)
					in := innerAtSix(t, store, clock, inner, quiet)
					h := nestedRouter(mux, outer, in)
					for i := range 3 {
						w := serve(h, "GET", "/")
						rl := strings.Join(w.Header().Values("RateLimit"), "|")
						if n := strings.Count(rl, `"p";`); w.Code != http.StatusOK || n != 1 {
							t.Errorf("request %d (the shadow one %s): %d, RateLimit %q; want 200 and one member of p", i+1, map[bool]string{true: "admits", false: "denies"}[i == 0], w.Code, rl)
						}
					}
				})
			}
		}
	}
}
