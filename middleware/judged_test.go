package middleware_test

import (
	"net/http"
	"slices"
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

// judgedKind is a kind at 100 a minute and what the response reports
// 10 s into a minute of a client that used 40 there at the configured
// 100, once the limit drops to 50: admitted reports how many more pass
// and t their RateLimit's t (the last refused one's too, and its
// Retry-After); back the RateLimit member of the next request once the
// limit is back at 100 in that minute.
type judgedKind struct {
	spec     algorithms.Spec
	admitted int
	t        string
	back     string
}

// judgedKinds: the window kinds' guard (the 100's state) is judged at
// 50, so 10 more pass, all 50 counted at 100: the minute's end (50 s) for
// fixed_window; for sliding_window the next minute, where the 50 (51
// back at 100) weigh 50·(60−e)/60 and one more unit is free at e =
// 60/50 s (60/51 s): 51.2 s (51.18 s); for sliding_log the instants 60 s
// and a nanosecond old; for sliding_buckets (six of 10 s) the bucket of
// [10 s, 20 s) leaving the window at 70 s. token_bucket's guard is
// checked at its own 100, of which 60 are left: 50 more pass at 50, the
// 51st waits for a token at 50 a minute (1.2 s); back at 100, 10 of its
// tokens are left, 9 after the request, and the next comes in 0.6 s.
var judgedKinds = []judgedKind{
	{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Minute}, 10, "50", `"p";r=49;t=50`},
	{algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 100, Window: time.Minute}, 10, "52", `"p";r=49;t=52`},
	{algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 100, Window: time.Minute}, 10, "61", `"p";r=49;t=61`},
	{algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 100, Window: time.Minute, Buckets: 6}, 10, "60", `"p";r=49;t=60`},
	{algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 100, Window: time.Minute}, 50, "2", `"p";r=9;t=1`},
}

// at returns spec at limit.
func at(spec algorithms.Spec, limit int64) algorithms.Spec {
	spec.Limit = limit
	return spec
}

// TestLoweredLimitCountsWindowUsage: a client that used 40 of a policy's
// 100 a minute, its limit then lowered to 50 in that minute, by SetLimit,
// by a reload (SetPolicies) at 50, or as a Fleet's share (of 200 at 100,
// set by SetLimitUnguarded, then reloaded at 100: the share carried over
// at 50; a window kind's share is judged on the configured counters, as
// SetLimit's) gets exactly 10 more for a window kind (its guards judged at 50),
// and 50 for token_bucket (its guard at its own 100, as before); the
// next is refused with RateLimit r=0, RateLimit-Policy q=50 and a
// Retry-After of the wait below 50. Raised back to 100 in that minute
// (SetLimit 0, a reload at 100, the share lifted), the 100's counters
// hold every request admitted. Through chi and a ServeMux, on the memory
// store and on Redis, on an injected clock.
func TestLoweredLimitCountsWindowUsage(t *testing.T) {
	for _, name := range storetest.Names {
		for _, k := range judgedKinds {
			for _, how := range []string{"SetLimit", "reload", "fleet share"} {
				for _, mux := range []string{"chi", "ServeMux"} {
					t.Run(name+"/"+string(k.spec.Algorithm)+"/"+how+"/"+mux, func(t *testing.T) {
						clock := algotest.NewClock(t0.Add(10 * time.Second))
						store := storetest.New(t, name, clock)
						pol := func(limit int64) *policy.Policy {
							return policy.Must(policy.New("p", at(k.spec, limit), constKey))
						}
						configured := int64(100)
						if how == "fleet share" {
							configured = 200
						}
						m := middleware.MustNew(store, []*policy.Policy{pol(configured)}, middleware.WithClock(clock))
						if how == "fleet share" {
							if err := m.SetLimitUnguarded("p", 100); err != nil {
								t.Fatal(err)
							}
						}
						h := routedBy(mux, m)
						if got := admittedOf(h, 40); got != 40 {
							t.Fatalf("at 100: %d of 40 admitted", got)
						}
						var lower, raise func() error
						switch how {
						case "SetLimit":
							lower = func() error { return m.SetLimit("p", 50) }
							raise = func() error { return m.SetLimit("p", 0) }
						case "reload":
							lower = func() error { return m.SetPolicies([]*policy.Policy{pol(50)}) }
							raise = func() error { return m.SetPolicies([]*policy.Policy{pol(100)}) }
						case "fleet share":
							lower = func() error { return m.SetPolicies([]*policy.Policy{pol(100)}) }
							raise = func() error { return m.SetLimitUnguarded("p", 0) }
						}
						if err := lower(); err != nil {
							t.Fatal(err)
						}
						if got := m.Set().Policy(0).Spec().Limit; got != 50 {
							t.Fatalf("lowered: limit %d, want 50", got)
						}
						want := []algorithms.Spec{at(k.spec, 100)}
						if how == "fleet share" && k.spec.Algorithm.Windowed() {
							// The share judged on the configured
							// counters (folded), and the configured
							// Spec the reload replaced, judged at it.
							want = append(want, at(k.spec, 200))
						}
						if gs := m.Set().Policy(0).Guards(); !slices.Equal(gs, want) {
							t.Fatalf("lowered: guards %v, want %v", gs, want)
						}
						for i := range k.admitted {
							w := serve(h, "GET", "/")
							want := `"p";r=` + strconv.Itoa(k.admitted-1-i) + ";t="
							if w.Code != http.StatusOK || w.Header().Get("RateLimit-Policy") != `"p";q=50;w=60` || !strings.HasPrefix(w.Header().Get("RateLimit"), want) {
								t.Fatalf("request %d at 50: %d, RateLimit-Policy %q, RateLimit %q; want 200, %q, %s…",
									i+1, w.Code, w.Header().Get("RateLimit-Policy"), w.Header().Get("RateLimit"), `"p";q=50;w=60`, want)
							}
						}
						w := serve(h, "GET", "/")
						if w.Code != http.StatusTooManyRequests || w.Header().Get("RateLimit-Policy") != `"p";q=50;w=60` ||
							w.Header().Get("RateLimit") != `"p";r=0;t=`+k.t || w.Header().Get("Retry-After") != k.t {
							t.Errorf("request %d at 50: %d, RateLimit-Policy %q, RateLimit %q, Retry-After %q; want 429, %q, %q, %q",
								k.admitted+1, w.Code, w.Header().Get("RateLimit-Policy"), w.Header().Get("RateLimit"), w.Header().Get("Retry-After"),
								`"p";q=50;w=60`, `"p";r=0;t=`+k.t, k.t)
						}
						if err := raise(); err != nil {
							t.Fatal(err)
						}
						w = serve(h, "GET", "/")
						if w.Code != http.StatusOK || w.Header().Get("RateLimit-Policy") != `"p";q=100;w=60` || w.Header().Get("RateLimit") != k.back {
							t.Errorf("back at 100: %d, RateLimit-Policy %q, RateLimit %q; want 200, %q, %q",
								w.Code, w.Header().Get("RateLimit-Policy"), w.Header().Get("RateLimit"), `"p";q=100;w=60`, k.back)
						}
					})
				}
			}
		}
	}
}
