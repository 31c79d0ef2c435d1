package adaptive_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCostAboveTheLimitInForce holds the package doc's "Request costs": a
// request that costs more than the limit in force (a level's, a Fleet's
// share) but no more than the configured limit is denied by the policy
// while that limit is in force, as a request it has no room for now: a
// 429 with a Retry-After and the policy's RateLimit member at the limit
// in force, whose problem says the limit is lowered; it is admitted again
// once the limit is back. An upload of 90 units under 100 a minute, for a
// window kind and a bucket kind, through chi and a ServeMux.
func TestCostAboveTheLimitInForce(t *testing.T) {
	for _, kind := range []algorithms.Kind{algorithms.SlidingWindow, algorithms.TokenBucket} {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(string(kind)+"/"+mux, func(t *testing.T) {
				clock := algotest.NewClock(t0)
				spec := algorithms.Spec{Algorithm: kind, Limit: 100, Window: time.Minute}
				upload := policy.Must(policy.New("upload", spec, ip, policy.WithCost(func(*http.Request) int64 { return 90 })))
				m := clockedMiddleware(t, clock, []*policy.Policy{upload})
				h := routed(mux, emptyApp, m.Handler)
				send := func() *httptest.ResponseRecorder {
					w := httptest.NewRecorder()
					h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
					return w
				}
				refused := func(when string, limit int) {
					t.Helper()
					w := send()
					lowered := "policy upload admits 1 to " + strconv.Itoa(limit) + " while its limit is lowered (1 to 100 as configured)"
					if ra, err := strconv.Atoi(w.Header().Get("Retry-After")); w.Code != http.StatusTooManyRequests || err != nil || ra < 1 ||
						!strings.HasPrefix(w.Header().Get("RateLimit"), `"upload";r=`) || !strings.Contains(w.Body.String(), lowered) {
						t.Errorf("%s: %d, Retry-After %q, RateLimit %q, body %s; want 429 denied, a Retry-After, the policy's member, %q",
							when, w.Code, w.Header().Get("Retry-After"), w.Header().Get("RateLimit"), w.Body.String(), lowered)
					}
				}

				c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				period(t, c, clock, 100, 5, 30*time.Millisecond) // 0.8: 80
				refused("at 80", 80)
				period(t, c, clock, 100, 0, 10*time.Millisecond) // 0.9: 90
				if w := send(); w.Code != http.StatusOK {
					t.Errorf("at 90: %d, want 200", w.Code)
				}

				// Not driven by both at once: a Fleet once the level is 1.
				period(t, c, clock, 100, 0, 10*time.Millisecond)
				n := 2
				f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Clock: clock, Instances: func() int { return n }})
				if err != nil {
					t.Fatal(err)
				}
				refused("a share of 50", 50)
				n = 1
				if err := f.Update(); err != nil {
					t.Fatal(err)
				}
				clock.Advance(time.Minute)
				if w := send(); w.Code != http.StatusOK {
					t.Errorf("one instance, the next minute: %d, want 200", w.Code)
				}
			})
		}
	}
}
