package middleware_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware"
)

// TestNestedBucketLoweredLegacyLimitInForce: the shape of
// TestNestedBucketLoweredDraftLimitListed under the legacy X-RateLimit-*
// profiles. A token_bucket of 5 a minute in two nested middlewares,
// lowered to 3 further in (SetLimit or a reload) after two requests:
// the copy further in decides the third under its 3 (the 5, counted
// further out, merged in), as the IETF profile says ("p";q=3). Both hold
// 2 more requests; X-RateLimit-Limit must be the limit in force, 3, not
// the 5 the copy further in replaced.
func TestNestedBucketLoweredLegacyLimitInForce(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		for _, how := range []string{"SetLimit", "reload"} {
			for _, prof := range []middleware.Profile{middleware.Legacy, middleware.LegacyUnix} {
				t.Run(mux+"/"+how+"/"+prof.String(), func(t *testing.T) {
					h, clock, w := loweredBucketThird(t, mux, how, prof)
					limit, remaining := w.Header().Get("X-RateLimit-Limit"), w.Header().Get("X-RateLimit-Remaining")
					if w.Code != http.StatusOK || limit != "3" || remaining != "2" {
						t.Errorf("third request: %d, X-RateLimit-Limit %q, X-RateLimit-Remaining %q; want 200, limit 3 (in force), 2 left (%v)",
							w.Code, limit, remaining, w.Header())
					}
					// The reset is the copy's, when its allowance is
					// back in full: within the minute, a LegacyUnix one
					// an instant of the middleware's clock.
					reset, err := strconv.ParseInt(w.Header().Get("X-RateLimit-Reset"), 10, 64)
					if prof == middleware.LegacyUnix {
						reset -= clock.Now().Unix()
					}
					if err != nil || reset < 1 || reset > 60 {
						t.Errorf("third request: X-RateLimit-Reset %q (%d s from now), want 1 to 60 s from the clock's now (%v)",
							w.Header().Get("X-RateLimit-Reset"), reset, err)
					}
					if got := admittedOf(h, 5); got != 2 {
						t.Errorf("then %d admitted, want 2", got)
					}
				})
			}
		}
	}
}
