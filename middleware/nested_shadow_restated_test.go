package middleware_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestShadowOuterRestatedMemberBinds: "p" in three nested middlewares,
// the outermost in shadow mode at 8 (raised by SetLimit from its
// configured 3), the middle one enforcing at 3, the innermost at 8 as
// configured. The middle one leaves "p" out (the shadow one counted the
// request under the 3's state) and restates the shadow one's member at
// its own 3, the limit in force ("p";q=3, r = 3 - used). The innermost
// decides its 8 itself (the shadow one's Spec, which that one checked on
// the 3's state alone) and replaces that member by its own: it must carry
// the restated member's lower q and r into its own, as it does when the
// one further out enforces, since the member reports the middle one's
// limit, not the shadow one's. The third request reported "p";q=8;r=5,
// where no more requests are admitted. Through chi and a ServeMux, the
// outer one raised before the first request or before the third.
func TestShadowOuterRestatedMemberBinds(t *testing.T) {
	for _, mux := range []string{"chi", "ServeMux"} {
		for _, at := range []int{0, 2} {
			t.Run(fmt.Sprintf("%s/raised before request %d", mux, at+1), func(t *testing.T) {
				store, clock := newStore(t)
				clock.Advance(10 * time.Second)
				p := func(limit int64) *policy.Policy { return fixed("p", limit, time.Minute, constKey) }
				outer := middleware.MustNew(store, []*policy.Policy{p(3)}, middleware.WithClock(clock), middleware.WithShadow(nil), middleware.WithErrorHandler(func(*http.Request, error) {}))
				mid := middleware.MustNew(store, []*policy.Policy{p(3)}, middleware.WithClock(clock), middleware.WithErrorHandler(func(*http.Request, error) {}))
				inner := middleware.MustNew(store, []*policy.Policy{p(8)}, middleware.WithClock(clock), middleware.WithErrorHandler(func(*http.Request, error) {}))
				h := nested3Router(mux, outer, mid, inner)
				for i, want := range []struct {
					code        int
					line, quota string
				}{
					{200, `"p";r=2;t=50`, `"p";q=3;w=60`},
					{200, `"p";r=1;t=50`, `"p";q=3;w=60`},
					{200, `"p";r=0;t=50`, `"p";q=3;w=60`},
					{429, `"p";r=0;t=50`, `"p";q=3;w=60`},
				} {
					if i == at {
						setLimit(t, outer, "p", 8)
					}
					w := serve(h, "GET", "/")
					// Before the raise, the 3 and the 8 count apart and
					// each has its member; the 3's is the binding one.
					line, quota := strings.Join(w.Header().Values("RateLimit"), ", "), strings.Join(w.Header().Values("RateLimit-Policy"), ", ")
					if i < at {
						line, quota = strings.Split(line, ", ")[0], strings.Split(quota, ", ")[0]
					}
					if w.Code != want.code || line != want.line || quota != want.quota {
						t.Errorf("raised before request %d, request %d: %d, RateLimit %q, RateLimit-Policy %q; want %d, %q, %q",
							at+1, i+1, w.Code, w.Header().Values("RateLimit"), w.Header().Values("RateLimit-Policy"), want.code, want.line, want.quota)
					}
				}
			})
		}
	}
}
