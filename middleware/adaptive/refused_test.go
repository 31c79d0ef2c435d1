package adaptive_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestRefusedRequestsJudgePeriods: a Controller fed by the middleware
// (SetFeedback) is told of the requests the middleware refuses too, and
// judges the periods that ended as each is: once a lowered level denies
// every request (one client that used the lowered 80 of its hourly 100,
// or one key every client shares), the level climbs back a Step per
// healthy period, as a ticker's Evaluate at each period's end would raise
// it, not only when the hour ends. The refused request that judges the
// periods is decided at the level before; the next one at the level
// raised. Through a ServeMux and chi, on an injected clock.
func TestRefusedRequestsJudgePeriods(t *testing.T) {
	for _, router := range []string{"ServeMux", "chi"} {
		for _, shared := range []bool{false, true} {
			name := router + "/one client"
			key := ip
			if shared {
				name, key = router+"/one shared key", keyfunc.Global()
			}
			t.Run(name, func(t *testing.T) {
				clock := algotest.NewClock(t0) // the hour's window ends 46 minutes after t0
				p := policy.Must(policy.New("hourly", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Hour}, key))
				m := clockedMiddleware(t, clock, []*policy.Policy{p})
				c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond, Step: 0.01})
				if err != nil {
					t.Fatal(err)
				}
				m.SetFeedback(c)
				failing := true
				app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if failing {
						clock.Advance(time.Second)
						w.WriteHeader(http.StatusBadGateway)
					}
				})
				h := routed(router, app, m.Handler)
				client := 0
				serve := func(n int) (admitted int, codes []int) {
					for range n {
						client++
						r := httptest.NewRequest("GET", "/", nil)
						if shared {
							r.RemoteAddr = fmt.Sprintf("192.0.2.%d:1234", 1+client%200)
						}
						w := httptest.NewRecorder()
						h.ServeHTTP(w, r)
						codes = append(codes, w.Code)
						if w.Code != http.StatusTooManyRequests {
							admitted++
						}
					}
					return admitted, codes
				}

				// A slow and failing first minute: 20 requests of 1 s,
				// answered 502.
				if admitted, codes := serve(20); admitted != 20 {
					t.Fatalf("first minute: %d of 20 admitted (%v), want 20", admitted, codes)
				}
				failing = false
				clock.Set(t0.Add(time.Minute))
				// The first request of the next minute is admitted at the
				// configured 100 and judges the first minute: level 0.8.
				// Then 59 more, up to the lowered 80 used.
				if admitted, _ := serve(100); admitted != 60 || limitsOf(m) != "80" {
					t.Fatalf("second minute: %d of 100 admitted, limit %s; want 60, 80", admitted, limitsOf(m))
				}
				// Every request is denied now. Each following minute, the
				// first request (denied at the level of before) judges the
				// minute that ended, healthy: one Step up (0.01), and
				// the next request is admitted at 81, 82, ...
				for minute := 2; minute <= 4; minute++ {
					clock.Set(t0.Add(time.Duration(minute) * time.Minute))
					admitted, codes := serve(3)
					want := fmt.Sprint(79 + minute)
					if admitted != 1 || fmt.Sprint(codes) != "[429 200 429]" || limitsOf(m) != want {
						t.Fatalf("minute %d: %v, limit %s (level %v); want [429 200 429], %s: the refused request judges the minute that ended",
							minute, codes, limitsOf(m), c.Level(), want)
					}
				}
				// The minute of the last request and four without one: the
				// one that comes then, denied, judges them all, one Step each, as five ticks
				// would have (83 then 88), and five more are admitted.
				clock.Set(t0.Add(9 * time.Minute))
				if admitted, codes := serve(7); admitted != 5 || limitsOf(m) != "88" || codes[0] != http.StatusTooManyRequests {
					t.Fatalf("after five quiet minutes: %v, limit %s (level %v); want the first denied, then 5 admitted, 88",
						codes, limitsOf(m), c.Level())
				}
			})
		}
	}
}

// TestRefusedJudgesAsEvaluate: Controller.Refused judges the periods that
// ended as Evaluate does at the same instant, and as a ticker's Evaluate
// at every period's end would have: the three Controllers, fed the same
// random trace of requests ending (fast or slow, failing or not),
// beginning, hanging and ending, with requests refused in between (told
// to the first by Refused, to the second by an Evaluate, to the third not
// at all) over gaps of up to ten periods, are at the same level and
// baseline after every step. A refused request is neither a sample nor in
// flight: the third Controller never hears of it.
func TestRefusedJudgesAsEvaluate(t *testing.T) {
	const period = time.Minute
	lowered, refusedOnly := 0, 0
	for seed := range 300 {
		rng := rand.New(rand.NewPCG(uint64(seed), 29))
		cfg := randomTraceConfig(rng, period)
		refused, rclock := newController(t, newMiddleware(t, 100), cfg)
		evaluated, eclock := newController(t, newMiddleware(t, 100), cfg)
		ticked, tclock := newController(t, newMiddleware(t, 100), cfg)
		cs := []*adaptive.Controller{refused, evaluated, ticked}
		type spans [3]interface{ End() }
		var inFlight []spans
		low := false
		gaps := []time.Duration{0, time.Second, 10 * time.Second, 59 * time.Second, period, 90 * time.Second, 2 * period, 3 * period, 10 * period}
		lats := []time.Duration{time.Millisecond, 10 * time.Millisecond, 15 * time.Millisecond, 100 * time.Millisecond, time.Second}
		refusing := false // a run of refused requests, nothing else told
		for step := range 400 {
			to := rclock.Now().Add(gaps[rng.IntN(len(gaps))])
			tickTo(t, ticked, tclock, period, to)
			rclock.Set(to)
			eclock.Set(to)
			if rng.IntN(8) == 0 {
				refusing = !refusing
			}
			switch r := rng.IntN(10); {
			case refusing || r == 9:
				refused.Refused()
				if err := evaluated.Evaluate(); err != nil {
					t.Fatal(err)
				}
				if refusing {
					refusedOnly++
				}
			case r < 6 || r >= 8 && len(inFlight) == 0:
				lat, status := lats[rng.IntN(len(lats))], http.StatusOK
				if rng.IntN(4) == 0 {
					status = http.StatusServiceUnavailable
				}
				for _, c := range cs {
					c.Observe(lat, status)
				}
			case r < 8:
				inFlight = append(inFlight, spans{refused.Begin(), evaluated.Begin(), ticked.Begin()})
			default:
				i := rng.IntN(len(inFlight))
				for _, s := range inFlight[i] {
					s.End()
				}
				inFlight = append(inFlight[:i], inFlight[i+1:]...)
			}
			for i, name := range []string{"Evaluate", "a ticker"} {
				if l, o := refused.Level(), cs[i+1].Level(); l != o {
					t.Fatalf("seed %d step %d (%v, %d in flight): level %v judged by Refused, %v by %s", seed, step, to.Sub(t0), len(inFlight), l, o, name)
				}
				if l, o := refused.Baseline(), cs[i+1].Baseline(); l != o {
					t.Fatalf("seed %d step %d: baseline %v judged by Refused, %v by %s", seed, step, l, o, name)
				}
			}
			low = low || refused.Level() < 1
		}
		for _, s := range inFlight {
			for _, e := range s {
				e.End()
			}
		}
		if low {
			lowered++
		}
	}
	// The traces lower the level, and judge periods on refusals alone.
	if lowered < 100 || refusedOnly < 10_000 {
		t.Errorf("%d traces of 300 lowered the level, %d steps were refusals in a run; want at least 100 and 10000", lowered, refusedOnly)
	}
}

// TestRefusedAllocatesNothing: telling a Controller of a refused request
// allocates nothing within a period, and a request the middleware denies
// allocates no more with a Controller as its Feedback than with none, or
// with a Feedback that has no Refused method.
func TestRefusedAllocatesNothing(t *testing.T) {
	clock := algotest.NewClock(t0)
	p := policy.Must(policy.New("hourly", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, ip))
	m := clockedMiddleware(t, clock, []*policy.Policy{p})
	c, err := adaptive.New(m, adaptive.Config{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if got := testing.AllocsPerRun(1000, c.Refused); got != 0 {
		t.Errorf("Refused: %v allocations per call, want 0", got)
	}
	h := routed("ServeMux", emptyApp, m.Handler)
	r := httptest.NewRequest("GET", "/", nil)
	h.ServeHTTP(httptest.NewRecorder(), r) // the hour's one request
	// The fewest of a few measurements (see TestFeedbackBeginAllocatesNothing).
	allocs := func() float64 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusTooManyRequests {
			t.Fatalf("status %d, want 429", w.Code)
		}
		fewest := math.Inf(1)
		for range 5 {
			fewest = min(fewest, testing.AllocsPerRun(200, func() { h.ServeHTTP(httptest.NewRecorder(), r) }))
		}
		return fewest
	}
	none := allocs()
	m.SetFeedback(observeOnly{c})
	observed := allocs()
	m.SetFeedback(c)
	got := allocs()
	t.Logf("allocations per denied request: %v without a Feedback, %v with one without Refused, %v with a Controller", none, observed, got)
	if got > none || got > observed {
		t.Errorf("%v allocations per request denied with a Controller as the Feedback, want at most %v (none) and %v (no Refused)", got, none, observed)
	}
}

// TestRefusedAfterAnotherSetLimit: the Refused documentation says what a
// call costs within a period once the rules it knows are in force: no
// allocation. A limit set by another (a Fleet's, a SetLimit of one's own,
// here on a policy the Controller does not drive) replaces the rule set,
// and the first call after it looks whether a reload replaced the
// configured policies (under the lock, with an allocation: the
// documentation says so); the calls after it cost nothing again, and the
// limit stays.
func TestRefusedAfterAnotherSetLimit(t *testing.T) {
	clock := algotest.NewClock(t0)
	m := clockedMiddleware(t, clock, []*policy.Policy{
		policy.Must(policy.PerMinute("driven", 100, ip)),
		policy.Must(policy.PerMinute("shared", 100, ip)),
	})
	c, err := adaptive.New(m, adaptive.Config{Clock: clock, Policies: []string{"driven"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetLimit("shared", 50); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c.Refused()
	runtime.ReadMemStats(&after)
	if n := after.Mallocs - before.Mallocs; n == 0 {
		t.Errorf("the first Refused after another's SetLimit allocated nothing: the documentation says it looks under the lock")
	} else {
		t.Logf("the first Refused after another's SetLimit: %d allocations", n)
	}
	if got := testing.AllocsPerRun(100, c.Refused); got != 0 {
		t.Errorf("Refused after it: %v allocations per call, want 0", got)
	}
	if got := limitsOf(m); got != "100,50" {
		t.Errorf("limits %s, want 100,50", got)
	}
}
