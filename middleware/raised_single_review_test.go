package middleware_test

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestSharedPolicyRestatedSingleValued: one policy of 8 a minute given
// to three nested middlewares, raised to 14 further out (SetLimit) and
// to 12 further in, configured in the middle. The one in the middle
// leaves it out (counted further out) and restates the values further
// out at its 8 (7 left after the first request); the one further in,
// raised over the 8 further out, decides it at 12 (11 left): a
// single-valued profile reports the lowest remaining, the 8's, not the
// 12's over it. Through chi and a ServeMux, every single-valued
// profile, for two requests.
func TestSharedPolicyRestatedSingleValued(t *testing.T) {
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, prof := range []middleware.Profile{middleware.Draft7, middleware.Draft6, middleware.Legacy} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(fmt.Sprintf("%v/%s", prof, mux), func(t *testing.T) {
				store, clock := newStore(t)
				var ms [3]*middleware.Middleware
				for i := range ms {
					ms[i] = middleware.MustNew(store, []*policy.Policy{fixed("p", 8, time.Minute, constKey)},
						middleware.WithClock(clock), quiet, middleware.WithHeaders(prof))
				}
				setLimit(t, ms[0], "p", 14)
				setLimit(t, ms[2], "p", 12)
				h := nested3Router(mux, ms[0], ms[1], ms[2])
				for used := 1; used <= 2; used++ {
					w := serve(h, "GET", "/")
					left := fmt.Sprint(8 - used)
					want := map[string][]string{
						"X-RateLimit-Limit": {"8"}, "X-RateLimit-Remaining": {left},
					}
					switch prof {
					case middleware.Draft7:
						want = map[string][]string{"RateLimit": {"limit=8, remaining=" + left + ", reset=60"}}
					case middleware.Draft6:
						want = map[string][]string{"RateLimit-Limit": {"8"}, "RateLimit-Remaining": {left}}
					}
					if w.Code != http.StatusOK {
						t.Errorf("request %d: %d, want 200", used, w.Code)
					}
					for k, v := range want {
						if got := w.Header().Values(k); !slices.Equal(got, v) {
							t.Errorf("request %d: %s %q, want %q", used, k, got, v)
						}
					}
				}
			})
		}
	}
}
