package adaptive_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// windowKinds are the window kinds at limit a minute (sliding_buckets in
// six buckets of 10 s).
func windowKinds(limit int64) []algorithms.Spec {
	return []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: limit, Window: time.Minute},
		{Algorithm: algorithms.SlidingWindow, Limit: limit, Window: time.Minute},
		{Algorithm: algorithms.SlidingLog, Limit: limit, Window: time.Minute},
		{Algorithm: algorithms.SlidingBuckets, Limit: limit, Window: time.Minute, Buckets: 6},
	}
}

// routed serves GET / with app through mws, the first outermost: chi's
// r.Use, or around a ServeMux's route (mux "chi" or "ServeMux").
func routed(mux string, app http.Handler, mws ...func(http.Handler) http.Handler) http.Handler {
	if mux == "chi" {
		r := chi.NewRouter()
		r.Use(mws...)
		r.Get("/", app.ServeHTTP)
		return r
	}
	for i := len(mws) - 1; i >= 0; i-- {
		app = mws[i](app)
	}
	sm := http.NewServeMux()
	sm.Handle("GET /", app)
	return sm
}

// emptyApp is a handler that answers 200 and writes nothing.
var emptyApp = http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})

// serveN serves n requests through h and returns how many were admitted
// and the last response.
func serveN(h http.Handler, n int) (int, *httptest.ResponseRecorder) {
	admitted := 0
	var w *httptest.ResponseRecorder
	for range n {
		w = httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		if w.Code == http.StatusOK {
			admitted++
		}
	}
	return admitted, w
}

// TestFleetReloadJudgesShareUsage: a Fleet of two instances shares a
// cluster-wide limit of 200 a minute (a window kind): a share of 100, of
// which a client used 40, 10 s into a minute. A reload halves the
// cluster-wide limit: the share carried over, and set again by
// Fleet.Update, is 50, guarded by the share of 100 it replaced, judged at
// 50: the client gets 10 more, not 50. The 11th is refused with the
// share's q=50, r=0 and a Retry-After of the wait below 50 (the minute's
// end, 50 s, for fixed_window; for sliding_window the next minute, where
// the 50 weigh 50·(60−e)/60 and one more is free at e = 1.2 s, 52 s; 60 s
// and a nanosecond for sliding_log, 61 s; the bucket of [10 s, 20 s)
// leaving the window for sliding_buckets, 60 s). Down to one instance in
// that minute, the configured 100 is the share of 100's state again,
// holding the 50 admitted. Through chi and a ServeMux.
func TestFleetReloadJudgesShareUsage(t *testing.T) {
	waits := map[algorithms.Kind]string{
		algorithms.FixedWindow:    "50",
		algorithms.SlidingWindow:  "52",
		algorithms.SlidingLog:     "61",
		algorithms.SlidingBuckets: "60",
	}
	for _, spec := range windowKinds(200) {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(string(spec.Algorithm)+"/"+mux, func(t *testing.T) {
				clock := algotest.NewClock(t0.Add(10 * time.Second))
				store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { store.Close() })
				pol := func(limit int64) *policy.Policy {
					s := spec
					s.Limit = limit
					return policy.Must(policy.New("per-ip", s, ip))
				}
				m := middleware.MustNew(store, []*policy.Policy{pol(200)}, middleware.WithClock(clock))
				n := 2
				f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Instances: func() int { return n }, Clock: clock})
				if err != nil {
					t.Fatal(err)
				}
				h := routed(mux, emptyApp, m.Handler, f.Handler)
				if got, _ := serveN(h, 40); got != 40 {
					t.Fatalf("at a share of 100: %d of 40 admitted", got)
				}
				if err := m.SetPolicies([]*policy.Policy{pol(100)}); err != nil {
					t.Fatal(err)
				}
				if err := f.Update(); err != nil {
					t.Fatal(err)
				}
				if got := m.Set().Policy(0).Spec().Limit; got != 50 {
					t.Fatalf("after the reload: a share of %d, want 50", got)
				}
				if got, _ := serveN(h, 10); got != 10 {
					t.Errorf("after the reload: %d of 10 admitted, want 10", got)
				}
				wait := waits[spec.Algorithm]
				_, w := serveN(h, 1)
				if w.Code != http.StatusTooManyRequests || w.Header().Get("RateLimit-Policy") != `"per-ip";q=50;w=60` ||
					w.Header().Get("RateLimit") != `"per-ip";r=0;t=`+wait || w.Header().Get("Retry-After") != wait {
					t.Errorf("the 11th after the reload: %d, RateLimit-Policy %q, RateLimit %q, Retry-After %q; want 429, %q, %q, %q",
						w.Code, w.Header().Get("RateLimit-Policy"), w.Header().Get("RateLimit"), w.Header().Get("Retry-After"),
						`"per-ip";q=50;w=60`, `"per-ip";r=0;t=`+wait, wait)
				}
				n = 1
				if err := f.Update(); err != nil {
					t.Fatal(err)
				}
				if _, w := serveN(h, 1); w.Code != http.StatusOK || w.Header().Get("RateLimit-Policy") != `"per-ip";q=100;w=60` ||
					!strings.HasPrefix(w.Header().Get("RateLimit"), `"per-ip";r=49;t=`) {
					t.Errorf("one instance, same minute: %d, RateLimit-Policy %q, RateLimit %q; want 200, %q, r=49",
						w.Code, w.Header().Get("RateLimit-Policy"), w.Header().Get("RateLimit"), `"per-ip";q=100;w=60`)
				}
			})
		}
	}
}

// TestControllerLevelsJudgeWindowUsage: a Controller moves a window
// kind's policy of 100 a minute within one minute: a client that used 60
// gets 20 more when the level drops to 80% (the configured 100's
// counters judged at 80), and, having so used 80, 10 more when it climbs
// back to 90%, not 20 (the 90's counters are fresh, the 100's hold the
// 80). Through chi and a ServeMux, on an injected clock.
func TestControllerLevelsJudgeWindowUsage(t *testing.T) {
	for _, spec := range windowKinds(100) {
		for _, mux := range []string{"chi", "ServeMux"} {
			t.Run(string(spec.Algorithm)+"/"+mux, func(t *testing.T) {
				clock := algotest.NewClock(t0)
				store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { store.Close() })
				m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("per-ip", spec, ip))}, middleware.WithClock(clock))
				c, err := adaptive.New(m, adaptive.Config{Clock: clock, Period: 10 * time.Second, Baseline: 10 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				h := routed(mux, emptyApp, m.Handler)
				evaluate := func(latency time.Duration, errs int) {
					t.Helper()
					for i := range 100 {
						status := 200
						if i < errs {
							status = 503
						}
						c.Observe(latency, status)
					}
					clock.Advance(10 * time.Second)
					if err := c.Evaluate(); err != nil {
						t.Fatal(err)
					}
				}
				if got, _ := serveN(h, 60); got != 60 {
					t.Fatalf("at 100: %d of 60 admitted", got)
				}
				evaluate(30*time.Millisecond, 5) // slow and failing: 80%
				if got := m.Set().Policy(0).Spec().Limit; got != 80 {
					t.Fatalf("after a bad period: limit %d, want 80", got)
				}
				if got, _ := serveN(h, 21); got != 20 {
					t.Errorf("at 80 after 60 used: %d of 21 admitted, want 20", got)
				}
				evaluate(10*time.Millisecond, 0) // healthy: a step up
				if got := m.Set().Policy(0).Spec().Limit; got != 90 {
					t.Fatalf("after a healthy period: limit %d, want 90", got)
				}
				got, w := serveN(h, 11)
				if got != 10 {
					t.Errorf("at 90 after 80 used: %d of 11 admitted, want 10", got)
				}
				if w.Code != http.StatusTooManyRequests || !strings.HasPrefix(w.Header().Get("RateLimit"), `"per-ip";r=0;t=`) {
					t.Errorf("the 11th at 90: %d, RateLimit %q; want 429, r=0", w.Code, w.Header().Get("RateLimit"))
				}
				if d := clock.Now().Sub(t0); d != 20*time.Second {
					t.Errorf("the clock moved %v, want 20s (all in one minute)", d)
				}
			})
		}
	}
}
