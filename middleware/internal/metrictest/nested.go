package metrictest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// nestedKinds are the kinds of the nested scenarios' shared policy, 4 a
// minute: every kind but leaky_queue, whose copy further in holds the
// request in a queue of its own and counts it there again.
var nestedKinds = []algorithms.Spec{
	{Algorithm: algorithms.FixedWindow, Limit: 4, Window: time.Minute},
	{Algorithm: algorithms.SlidingWindow, Limit: 4, Window: time.Minute},
	{Algorithm: algorithms.SlidingLog, Limit: 4, Window: time.Minute},
	{Algorithm: algorithms.SlidingBuckets, Limit: 4, Window: time.Minute, Buckets: 6},
	{Algorithm: algorithms.TokenBucket, Limit: 4, Window: time.Minute},
	{Algorithm: algorithms.LeakyBucket, Limit: 4, Window: time.Minute},
}

// nestedHows are the ways the nested scenarios leave the inner
// middleware's copy of the shared policy (see lowerInner).
var nestedHows = []string{"not lowered", "SetLimit", "reload"}

// lowerInner lowers inner's copy of the policy named name (spec, keyed by
// Remote, built with opts) to 2, as how says: "SetLimit" (as package
// middleware/adaptive does), "reload" (SetPolicies with keep, then the
// policy at 2), or "not lowered" (nothing).
func lowerInner(t *testing.T, inner *middleware.Middleware, how, name string, spec algorithms.Spec, keep []*policy.Policy, opts ...policy.Option) {
	t.Helper()
	switch how {
	case "SetLimit":
		if err := inner.SetLimit(name, 2); err != nil {
			t.Fatal(err)
		}
	case "reload":
		lowered := spec
		lowered.Limit = 2
		ps := append(keep[:len(keep):len(keep)], policy.Must(policy.New(name, lowered, Remote, opts...)))
		if err := inner.SetPolicies(ps); err != nil {
			t.Fatal(err)
		}
	}
}

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
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	for _, spec := range nestedKinds {
		for _, how := range nestedHows {
			for _, router := range []string{"chi", "ServeMux"} {
				t.Run(string(spec.Algorithm)+"/"+how+"/"+router, func(t *testing.T) {
					obs, count := newObserver(t)
					mem := memStore(t)
					p := policy.Must(policy.New("shared", spec, Remote))
					outer := middleware.MustNew(mem, []*policy.Policy{p}, middleware.WithObserver(obs), quiet)
					inner := middleware.MustNew(mem, []*policy.Policy{p}, middleware.WithObserver(obs), quiet)
					KeepAlive(t, outer)
					KeepAlive(t, inner)
					lowerInner(t, inner, how, "shared", spec, nil)
					want := []int{http.StatusOK, http.StatusOK, http.StatusOK}
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

// Counts is what the nested scenarios read of a metrics adapter's shared
// observer, each by the adapter's own reading of its metrics, failing
// the test when the series read is missing.
type Counts struct {
	// Requests returns how many requests it counted under the policy
	// named p with outcome ("allowed", "denied", "abandoned").
	Requests func(t *testing.T, p, outcome string) float64
	// GivenBack returns how many requests it counted given back under
	// the policy named p.
	GivenBack func(t *testing.T, p string) float64
}

// nestedRoutes serves GET / through outer, then between (when not nil),
// then inner, then a handler that answers 200: under chi, outer in
// r.Use and the other two on the route (r.With); under a ServeMux (any
// other router), outer around the mux and the other two around the
// handler of the mux's GET / pattern. This is how an application puts a
// middleware of its own (package middleware/adaptive's, say) on a route
// inside its global one.
func nestedRoutes(router string, outer, inner *middleware.Middleware, between func(http.Handler) http.Handler) http.Handler {
	if between == nil {
		between = func(h http.Handler) http.Handler { return h }
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	if router == "chi" {
		r := chi.NewRouter()
		r.Use(outer.Handler)
		r.With(between, inner.Handler).Get("/", ok)
		return r
	}
	mux := http.NewServeMux()
	mux.Handle("GET /", between(inner.Handler(ok)))
	return outer.Handler(mux)
}

// goneBetween passes the request on with its context ended, as when its
// client goes away between two middlewares.
func goneBetween(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithCancel(r.Context())
		cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// nestedClocked returns a memory store on a clock at T0, closed when the
// test ends, and the clock, for the store and the middlewares.
func nestedClocked(t *testing.T) (*algorithms.MemoryStore, *algotest.Clock) {
	t.Helper()
	clock := algotest.NewClock(T0)
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	return mem, clock
}

// NestedLoweredGiveBack is the scenario of one policy that does not count
// successful responses ("shared", 4 a minute, policy.CountIf with
// policy.CountFailed) given to two nested middlewares that report to one
// shared observer, the inner one's copy lowered to 2 by SetLimit or a
// reload, or not lowered, for each kind but leaky_queue, through chi and
// a ServeMux, on an injected clock (a second between requests). The
// inner middleware has a policy of its own ("own", 10 a minute, CountIf
// too) and, before both, a route policy that does not apply to GET /
// (so that a policy's place in the inner middleware's decisions is not
// its place in its rule set). Three requests are answered 200, and the
// units of each go back in both middlewares. Each is one request of
// "shared", counted allowed once (by the outer middleware, which counted
// its units) and given back once; the inner middleware's give-back of
// its lowered copy is not news (before, given back 6 under "shared"
// where allowed 3). "own" counts 3 allowed and 3 given back. Each
// middleware's Stats.GivenBack counts the requests it gave back units
// of: 3 each. newObserver returns the adapter's shared observer and its
// Counts.
func NestedLoweredGiveBack(t *testing.T, newObserver func(t *testing.T) (middleware.Observer, Counts)) {
	t.Helper()
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	failed := policy.CountIf(policy.CountFailed)
	perMinute := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}
	for _, spec := range nestedKinds {
		for _, how := range nestedHows {
			for _, router := range []string{"chi", "ServeMux"} {
				t.Run(string(spec.Algorithm)+"/"+how+"/"+router, func(t *testing.T) {
					obs, counts := newObserver(t)
					mem, clock := nestedClocked(t)
					shared := policy.Must(policy.New("shared", spec, Remote, failed))
					keep := []*policy.Policy{
						policy.Must(policy.New("route", perMinute, Remote, policy.WithRoutes("POST /elsewhere"))),
						policy.Must(policy.New("own", perMinute, Remote, failed)),
					}
					opts := []middleware.Option{middleware.WithObserver(obs), middleware.WithClock(clock), quiet}
					outer := middleware.MustNew(mem, []*policy.Policy{shared}, opts...)
					inner := middleware.MustNew(mem, append(keep[:len(keep):len(keep)], shared), opts...)
					KeepAlive(t, outer)
					KeepAlive(t, inner)
					lowerInner(t, inner, how, "shared", spec, keep, failed)
					h := nestedRoutes(router, outer, inner, nil)
					for i := range 3 {
						w := httptest.NewRecorder()
						h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
						if w.Code != http.StatusOK {
							t.Fatalf("request %d: status %d, want 200", i+1, w.Code)
						}
						clock.Advance(time.Second)
					}
					for _, c := range []struct {
						p, what string
						read    func(*testing.T, string) float64
					}{
						{"shared", "allowed", func(t *testing.T, p string) float64 { return counts.Requests(t, p, "allowed") }},
						{"shared", "given back", counts.GivenBack},
						{"own", "allowed", func(t *testing.T, p string) float64 { return counts.Requests(t, p, "allowed") }},
						{"own", "given back", counts.GivenBack},
					} {
						if got := c.read(t, c.p); got != 3 {
							t.Errorf("three requests counted %s under %q %v times, want 3 (once each)", c.what, c.p, got)
						}
					}
					if got, want := [2]int64{outer.Stats().GivenBack, inner.Stats().GivenBack}, [2]int64{3, 3}; got != want {
						t.Errorf("Stats().GivenBack of outer, inner %v, want %v", got, want)
					}
				})
			}
		}
	}
}

// NestedLoweredAbandoned is the scenario of one policy ("shared", 4 a
// minute) given to two nested middlewares that report to one shared
// observer, the inner one's copy lowered to 2 by SetLimit or a reload, or
// not lowered, for each kind but leaky_queue, through chi and a
// ServeMux, on an injected clock. The inner middleware has the policy
// alone or beside one of its own ("own", 10 a minute), after a route
// policy that does not apply to GET /. The outer middleware admits one
// request and counts it allowed under "shared"; its context then ends
// (a handler between the two), and the inner middleware abandons it. It
// is one request of "shared", counted allowed once and abandoned never
// under it, lowered or not (before, the lowered copy counted it
// abandoned too: allowed 1 and abandoned 1 under the one policy). "own"
// counts it abandoned. The response is the inner middleware's: 503 when
// it had a policy to decide (its lowered copy, or "own"), else the
// handler's 200. newObserver returns the adapter's shared observer and
// its Counts.
func NestedLoweredAbandoned(t *testing.T, newObserver func(t *testing.T) (middleware.Observer, Counts)) {
	t.Helper()
	quiet := middleware.WithErrorHandler(func(*http.Request, error) {})
	perMinute := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}
	for _, spec := range nestedKinds {
		for _, withOwn := range []bool{false, true} {
			for _, how := range nestedHows {
				for _, router := range []string{"chi", "ServeMux"} {
					beside := "alone"
					if withOwn {
						beside = "with own"
					}
					t.Run(string(spec.Algorithm)+"/"+beside+"/"+how+"/"+router, func(t *testing.T) {
						obs, counts := newObserver(t)
						mem, clock := nestedClocked(t)
						shared := policy.Must(policy.New("shared", spec, Remote))
						keep := []*policy.Policy{policy.Must(policy.New("route", perMinute, Remote, policy.WithRoutes("POST /elsewhere")))}
						if withOwn {
							keep = append(keep, policy.Must(policy.New("own", perMinute, Remote)))
						}
						opts := []middleware.Option{middleware.WithObserver(obs), middleware.WithClock(clock), quiet}
						outer := middleware.MustNew(mem, []*policy.Policy{shared}, opts...)
						inner := middleware.MustNew(mem, append(keep[:len(keep):len(keep)], shared), opts...)
						KeepAlive(t, outer)
						KeepAlive(t, inner)
						lowerInner(t, inner, how, "shared", spec, keep)
						wantCode := http.StatusOK
						if withOwn || how != "not lowered" {
							wantCode = http.StatusServiceUnavailable
						}
						w := httptest.NewRecorder()
						nestedRoutes(router, outer, inner, goneBetween).ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
						if w.Code != wantCode {
							t.Errorf("status %d, want %d", w.Code, wantCode)
						}
						type count struct {
							p, outcome string
							n          float64
						}
						want := []count{{"shared", "allowed", 1}, {"shared", "abandoned", 0}}
						if withOwn {
							want = append(want, count{"own", "allowed", 0}, count{"own", "abandoned", 1})
						}
						for _, c := range want {
							if got := counts.Requests(t, c.p, c.outcome); got != c.n {
								t.Errorf("one request counted %s under %q %v times, want %v", c.outcome, c.p, got, c.n)
							}
						}
					})
				}
			}
		}
	}
}
