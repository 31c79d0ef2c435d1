package adaptive_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// hung starts n requests through h that stay in the handler until the
// returned release is called, and returns once all n are in it (release
// then waits for them to return).
func hung(t *testing.T, h func(http.Handler) http.Handler, n int) (release func()) {
	t.Helper()
	in, out := make(chan struct{}), make(chan struct{})
	app := h(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in <- struct{}{}
		<-out
	}))
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			app.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
		}()
	}
	for range n {
		<-in
	}
	return func() {
		close(out)
		wg.Wait()
	}
}

// levels moves the clock on by a minute (a Period) k times, evaluating
// each, and returns the level after each.
func levels(t *testing.T, c *adaptive.Controller, clock *algotest.Clock, k int) []float64 {
	t.Helper()
	return levelsEvery(t, c, clock, time.Minute, k)
}

// levelsEvery is levels with periods of every.
func levelsEvery(t *testing.T, c *adaptive.Controller, clock *algotest.Clock, every time.Duration, k int) []float64 {
	t.Helper()
	var got []float64
	for range k {
		clock.Advance(every)
		if err := c.Evaluate(); err != nil {
			t.Fatal(err)
		}
		got = append(got, c.Level())
	}
	return got
}

// lowered returns a Controller on a middleware of one policy of 100 per
// minute, with a configured baseline of 10ms, lowered once to 80%.
func lowered(t *testing.T) (*adaptive.Controller, *algotest.Clock) {
	t.Helper()
	clock := algotest.NewClock(t0)
	c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	period(t, c, clock, 200, 3, 25*time.Millisecond)
	if c.Level() != 0.8 {
		t.Fatalf("after a slow and failing period: level %v, want 0.8", c.Level())
	}
	return c, clock
}

// TestHungRequestsHoldTheLevel: requests that do not return (a backend
// that hangs) are the worst latency there is, yet a Controller saw a
// request only when it ended: periods in which every request hung had no
// sample, counted as quiet and so healthy, and the level climbed back to
// the configured limit during the hang, letting more requests into the
// hung service. Requests in flight for longer than the threshold are now
// slow samples of every period they are in flight at its end, so the
// level holds (one sign) while they hang.
func TestHungRequestsHoldTheLevel(t *testing.T) {
	c, clock := lowered(t)
	release := hung(t, c.Handler, 25)
	for i := range 3 {
		clock.Advance(time.Minute)
		if err := c.Evaluate(); err != nil {
			t.Fatal(err)
		}
		if c.Level() != 0.8 {
			t.Fatalf("period %d of the hang, judged by a ticker's Evaluate: level %v, want 0.8 held", i+1, c.Level())
		}
	}
	release()
	// The hung requests ended in the period in course (taking 3 minutes):
	// it is slow, and holds; the next ones, healthy, climb.
	period(t, c, clock, 100, 0, 10*time.Millisecond)
	if c.Level() != 0.8 {
		t.Errorf("the period the hung requests ended in: level %v, want 0.8 held", c.Level())
	}
	period(t, c, clock, 100, 0, 10*time.Millisecond)
	if c.Level() != 0.9 {
		t.Errorf("a healthy period after the hang: level %v, want 0.9", c.Level())
	}
}

// TestHungRequestsHoldIdlePeriods: without a ticker, the periods that
// passed while every request hung were judged all at once at the next
// request, as idle and so healthy: the first request after a ten-minute
// hang put a lowered level back at the configured limit.
func TestHungRequestsHoldIdlePeriods(t *testing.T) {
	c, clock := lowered(t)
	release := hung(t, c.Handler, 25)
	defer release()
	clock.Advance(10 * time.Minute)
	c.Observe(10*time.Millisecond, http.StatusOK)
	if c.Level() != 0.8 {
		t.Errorf("the first request after ten minutes of hung ones: level %v, want 0.8 held", c.Level())
	}
}

// TestHungRequestsSeenAsTheyBegin: a request that begins after the period
// is over ends it, as one that ends does: during a hang, no request ends.
func TestHungRequestsSeenAsTheyBegin(t *testing.T) {
	c, clock := lowered(t)
	release := hung(t, c.Handler, 25)
	defer release()
	clock.Advance(time.Minute)
	// Errors elsewhere (a proxy's timeouts) with the hung requests: slow
	// and failing, lowered again when a new request begins.
	for range 5 {
		c.Observe(5*time.Millisecond, http.StatusGatewayTimeout)
	}
	clock.Advance(time.Minute)
	more := hung(t, c.Handler, 1)
	defer more()
	if c.Level() != 0.64 {
		t.Errorf("a request begun after a period of hung requests and 5xx: level %v, want 0.64", c.Level())
	}
}

// TestInFlightBelowThresholdOrQuiet: what the hold does not take. A
// request in flight is a sign only once it is known to be over the
// threshold (it began more than LatencyFactor times the baseline before
// the period's end), and a period with fewer such requests and samples
// than MinSamples is quiet, healthy, as before.
func TestInFlightBelowThresholdOrQuiet(t *testing.T) {
	for _, tc := range []struct {
		name     string
		baseline time.Duration
		hung     int
		want     []float64 // level after each of five periods
	}{
		// Over a threshold of 3 minutes: not known slow until more
		// than 3 minutes after they began.
		{"threshold of 3 minutes", 90 * time.Second, 25, []float64{0.85, 0.9, 0.95, 0.95, 0.95}},
		{"fewer than MinSamples", 10 * time.Millisecond, 19, []float64{0.85, 0.9, 0.95, 1, 1}},
		{"MinSamples", 10 * time.Millisecond, 20, []float64{0.8, 0.8, 0.8, 0.8, 0.8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := algotest.NewClock(t0)
			c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock, Baseline: tc.baseline, Step: 0.05})
			if err != nil {
				t.Fatal(err)
			}
			period(t, c, clock, 200, 3, 4*tc.baseline)
			if c.Level() != 0.8 {
				t.Fatalf("level %v, want 0.8", c.Level())
			}
			release := hung(t, c.Handler, tc.hung)
			defer release()
			got := levels(t, c, clock, 5)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("levels %v, want %v", got, tc.want)
			}
		})
	}
}

// TestHungRequestsThroughSetFeedback: the middleware's SetFeedback, the
// wiring the package recommends, tells the Controller of each request as
// it begins, as Controller.Handler does: through a ServeMux and a chi
// router, 25 hung requests hold the level.
func TestHungRequestsThroughSetFeedback(t *testing.T) {
	for _, router := range []string{"ServeMux", "chi"} {
		t.Run(router, func(t *testing.T) {
			m := newMiddleware(t, 100)
			clock := algotest.NewClock(t0)
			c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			m.SetFeedback(c)
			period(t, c, clock, 200, 3, 25*time.Millisecond)
			release := hung(t, func(h http.Handler) http.Handler {
				if router == "chi" {
					r := chi.NewRouter()
					r.Use(m.Handler)
					r.Get("/", h.ServeHTTP)
					return r
				}
				mux := http.NewServeMux()
				mux.Handle("GET /", m.Handler(h))
				return mux
			}, 25)
			defer release()
			for i := range 2 {
				clock.Advance(time.Minute)
				if err := c.Evaluate(); err != nil {
					t.Fatal(err)
				}
				if c.Level() != 0.8 || limitsOf(m) != "80" {
					t.Fatalf("period %d of the hang: level %v, limits %s; want 0.8 held, 80", i+1, c.Level(), limitsOf(m))
				}
			}
		})
	}
}

// TestInFlightEndsWhenNotObserved: a request the Controller is not told
// the end of (its client went away and its handler panicked, as a reverse
// proxy's does) is no longer in flight either: it does not hold the level
// for ever after.
func TestInFlightEndsWhenNotObserved(t *testing.T) {
	c, clock := lowered(t)
	app := c.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic(http.ErrAbortHandler)
	}))
	for range 25 {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		func() {
			defer func() {
				if p := recover(); p != http.ErrAbortHandler {
					t.Fatalf("recovered %v, want http.ErrAbortHandler", p)
				}
			}()
			app.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil).WithContext(ctx))
		}()
	}
	got := levels(t, c, clock, 2)
	if fmt.Sprint(got) != "[0.9 1]" {
		t.Errorf("levels %v after 25 requests dropped unobserved, want [0.9 1]", got)
	}
}

// TestInFlightConcurrent: requests beginning and ending on many goroutines
// while the clock moves on and periods are judged (slots made and dropped
// meanwhile) leave none counted in flight once they are all over: with
// MinSamples 1, a single one left would hold the level.
func TestInFlightConcurrent(t *testing.T) {
	clock := algotest.NewClock(t0)
	c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock, Baseline: time.Millisecond, MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var spans []interface{ End() }
			for i := range 300 {
				spans = append(spans, c.Begin())
				if (g+i)%7 == 0 {
					clock.Advance(time.Second)
				}
				if i%5 == 4 { // five in flight on this goroutine at a time
					for _, s := range spans {
						c.Observe(3*time.Millisecond, http.StatusServiceUnavailable)
						s.End()
					}
					spans = spans[:0]
				}
			}
		}()
	}
	wg.Wait()
	// The level right after may be 1: the goroutine that takes c.mu to
	// judge the first period reads the clock only then, and the others,
	// whose evaluations skip meanwhile, may have moved it four periods on
	// (on a loaded machine); all the requests are then in the period
	// judged (lowered) and the four after it pass for idle (one step up
	// each). So one more slow 5xx request in the period in course, which
	// is judged next: whatever came before, it lowers the level.
	s := c.Begin()
	c.Observe(3*time.Millisecond, http.StatusServiceUnavailable)
	s.End()
	clock.Advance(time.Minute)
	if err := c.Evaluate(); err != nil { // the period the requests ended in
		t.Fatal(err)
	}
	low := c.Level()
	if low > 0.8 {
		t.Fatalf("level %v after a period of slow 5xx only, want at most 0.8", low)
	}
	got := levels(t, c, clock, 2)
	step := func(k float64) float64 { return min(1, math.Round(low*1000+k*100)/1000) }
	if want := fmt.Sprint([]float64{step(1), step(2)}); fmt.Sprint(got) != want {
		t.Errorf("levels %v once every request is over, from %v; want %v", got, low, want)
	}
}
