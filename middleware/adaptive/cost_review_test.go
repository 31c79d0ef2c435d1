package adaptive_test

import (
	"net/http"
	"net/http/httptest"
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
// share) is out of the policy's range while it is in force, and refused
// as such (a 429 naming the limit in force, without Retry-After), though
// the configured limit admits it; it is admitted again once the limit is
// back. An upload of 90 units under 100 a minute, for a window kind and a
// bucket kind, through chi and a ServeMux.
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
				refused := func(when string) {
					t.Helper()
					w := send()
					if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "" ||
						!strings.Contains(w.Body.String(), "admits 1 to ") {
						t.Errorf("%s: %d, Retry-After %q, body %s; want 429 out of range, no Retry-After",
							when, w.Code, w.Header().Get("Retry-After"), w.Body.String())
					}
				}

				c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				period(t, c, clock, 100, 5, 30*time.Millisecond) // 0.8: 80
				refused("at 80")
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
				refused("a share of 50")
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
