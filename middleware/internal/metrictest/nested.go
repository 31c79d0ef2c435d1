package metrictest

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// NestedLowered is the scenario of one policy ("shared", 4 a minute)
// given to two nested middlewares that report to one shared observer,
// the inner one's copy lowered to 2 (by SetLimit, as package
// middleware/adaptive lowers it, or by a reload), or not lowered, for
// each kind but leaky_queue, through chi and a ServeMux. One client sends
// three requests. The outer middleware counts each under the policy's
// configured state; the inner one judges that count at its lowered limit
// (a bucket kind's copy counts it under its own lowered Spec too) and
// refuses the third. Each request is one request of the policy, counted
// allowed once (as when the policy is not lowered, where the inner one
// leaves it out), by the outer middleware, which counted its units; the
// third is counted denied too, by the inner one. newObserver returns the
// adapter's shared observer and a reading of the requests it counted
// under a policy and outcome ("allowed", "denied").
func NestedLowered(t *testing.T, newObserver func(t *testing.T) (middleware.Observer, func(t *testing.T, policy, outcome string) float64)) {
	t.Helper()
	kinds := []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 4, Window: time.Minute},
		{Algorithm: algorithms.SlidingWindow, Limit: 4, Window: time.Minute},
		{Algorithm: algorithms.SlidingLog, Limit: 4, Window: time.Minute},
		{Algorithm: algorithms.SlidingBuckets, Limit: 4, Window: time.Minute, Buckets: 6},
		{Algorithm: algorithms.TokenBucket, Limit: 4, Window: time.Minute},
		{Algorithm: algorithms.LeakyBucket, Limit: 4, Window: time.Minute},
	}
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, spec := range kinds {
		for _, how := range []string{"not lowered", "SetLimit", "reload"} {
			for _, router := range []string{"chi", "ServeMux"} {
				t.Run(string(spec.Algorithm)+"/"+how+"/"+router, func(t *testing.T) {
					obs, count := newObserver(t)
					mem := memStore(t)
					p := policy.Must(policy.New("shared", spec, Remote))
					outer := middleware.MustNew(mem, []*policy.Policy{p}, middleware.WithObserver(obs), quiet)
					inner := middleware.MustNew(mem, []*policy.Policy{p}, middleware.WithObserver(obs), quiet)
					KeepAlive(t, outer)
					KeepAlive(t, inner)
					want := []int{http.StatusOK, http.StatusOK, http.StatusOK}
					switch how {
					case "SetLimit":
						if err := inner.SetLimit("shared", 2); err != nil {
							t.Fatal(err)
						}
					case "reload":
						lowered := spec
						lowered.Limit = 2
						if err := inner.SetPolicies([]*policy.Policy{policy.Must(policy.New("shared", lowered, Remote))}); err != nil {
							t.Fatal(err)
						}
					}
					if how != "not lowered" {
						want[2] = http.StatusTooManyRequests
					}
					h := Routed(router, outer, inner)
					for i, code := range want {
						w := httptest.NewRecorder()
						h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
						if w.Code != code {
							t.Fatalf("request %d: status %d, want %d", i+1, w.Code, code)
						}
					}
					wantDenied := 0.0
					if how != "not lowered" {
						wantDenied = 1
					}
					if got := count(t, "shared", "allowed"); got != 3 {
						t.Errorf(`three requests counted allowed under "shared" %v times, want 3 (once each)`, got)
					}
					if got := count(t, "shared", "denied"); got != wantDenied {
						t.Errorf(`denied under "shared" %v, want %v`, got, wantDenied)
					}
				})
			}
		}
	}
}
