package adaptive_test

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// stallClock is a clock whose reading number at (counted from 1) stalls
// before it reads, until released: the goroutine making it is paused (a
// VM pause, a descheduled goroutine) between what it did before and the
// reading, which then reads the time of the release.
type stallClock struct {
	*algotest.Clock
	mu      sync.Mutex
	reads   int
	at      int
	stalled chan struct{}
	release chan struct{}
}

func (c *stallClock) Now() time.Time {
	c.mu.Lock()
	c.reads++
	stall := c.reads == c.at
	c.mu.Unlock()
	if stall {
		close(c.stalled)
		<-c.release
	}
	return c.Clock.Now()
}

// stallRead makes the n-th reading from now on stall, and returns a
// channel closed as it stalls and the function that releases it.
func (c *stallClock) stallRead(n int) (stalled <-chan struct{}, release func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.reads + n
	c.stalled, c.release = make(chan struct{}), make(chan struct{})
	return c.stalled, func() { close(c.release) }
}

// TestControllerPendingEvaluationObservesByInstant: the first request
// after a period's end evaluates it; stalled between taking the
// evaluation's lock and its reading of the clock, the requests observed
// meanwhile (which find the lock taken and go on) were counted in the
// window of the period being judged, and the periods they were observed
// in, left without a request in their own window, counted as idle, so
// healthy. Here a healthy first minute, then 20 slow and failing
// requests in the second minute while the evaluation of the first is
// stalled: the second minute must lower the level to 0.8, not the first
// (lowered, then raised again by the second, taken as idle, to 0.9).
func TestControllerPendingEvaluationObservesByInstant(t *testing.T) {
	clock := &stallClock{Clock: algotest.NewClock(t0)}
	c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	observe(c, 20, 0, 10*time.Millisecond) // a healthy first minute
	clock.Advance(time.Minute)
	// The first request after the minute reads the clock (1), takes the
	// lock and stalls before its second reading (2).
	stalled, release := clock.stallRead(2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Observe(10*time.Millisecond, 200)
	}()
	hangguard.Await(t, stalled, 10*time.Second, "the evaluating request's reading")
	clock.Advance(30 * time.Second) // 90 s: the second minute
	observe(c, 20, 20, time.Second) // slow and failing
	clock.Advance(time.Minute)      // 150 s: the second minute is over
	release()
	hangguard.Await(t, done, 10*time.Second, "the evaluating request")
	if got := evaluated(t, c); got != 0.8 {
		t.Errorf("level %v, want 0.8 (a healthy first minute, a slow and failing second)", got)
	}
	// The third minute, healthy and quiet, climbs back.
	clock.Advance(30 * time.Second) // 180 s
	if got := evaluated(t, c); got != 0.9 {
		t.Errorf("after a quiet third minute: level %v, want 0.9", got)
	}
}

// TestControllerStalledEvaluatorObservesItsOwnInstant: the request whose
// evaluation stalled between its two readings of the clock is observed
// at its first, in the period it read then (the second minute here),
// not in the one its evaluation finds in course (the third).
func TestControllerStalledEvaluatorObservesItsOwnInstant(t *testing.T) {
	clock := &stallClock{Clock: algotest.NewClock(t0)}
	c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond, MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute) // a quiet first minute
	stalled, release := clock.stallRead(2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Observe(time.Second, 503) // read at 60 s: the second minute
	}()
	hangguard.Await(t, stalled, 10*time.Second, "the evaluating request's reading")
	clock.Advance(90 * time.Second) // 150 s: the second minute is over
	release()
	hangguard.Await(t, done, 10*time.Second, "the evaluating request")
	if got := c.Level(); got != 0.8 {
		t.Errorf("level %v, want 0.8 (the second minute slow and failing, judged)", got)
	}
}

// TestControllerClockSetBackWhilePending: a clock set back before the
// period in course restarts it "its requests kept": also those observed
// in later periods while the evaluation that found the clock set back
// was pending.
func TestControllerClockSetBackWhilePending(t *testing.T) {
	clock := &stallClock{Clock: algotest.NewClock(t0)}
	c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	observe(c, 20, 0, 10*time.Millisecond)
	clock.Advance(time.Minute)
	stalled, release := clock.stallRead(2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Observe(10*time.Millisecond, 200)
	}()
	hangguard.Await(t, stalled, 10*time.Second, "the evaluating request's reading")
	clock.Advance(30 * time.Second)
	observe(c, 20, 20, time.Second) // slow and failing, in the second minute
	clock.Set(t0.Add(-time.Hour))   // corrected: an hour before the first minute
	release()
	hangguard.Await(t, done, 10*time.Second, "the evaluating request")
	if got := c.Level(); got != 1 {
		t.Fatalf("level %v as the clock is set back, want 1 (the restarted period not ended)", got)
	}
	clock.Advance(time.Minute)
	if got := evaluated(t, c); got != 0.8 {
		t.Errorf("level %v at the restarted period's end, want 0.8 (its 41 requests kept, 20 slow and failing)", got)
	}
}

// TestControllerPendingEvaluationThroughFeedback: the same through the
// middleware's SetFeedback behind a ServeMux and chi: the request that
// begins first after the first minute takes the evaluation and stalls;
// 20 requests of the second minute that fail in 5 ms (over a baseline of
// 1 ms) begin, end and are observed meanwhile. The second minute lowers
// the limit to 80 once judged, and is not counted as idle.
func TestControllerPendingEvaluationThroughFeedback(t *testing.T) {
	for _, router := range []string{"ServeMux", "chi"} {
		t.Run(router, func(t *testing.T) {
			base := algotest.NewClock(t0)
			clock := &stallClock{Clock: base}
			m := clockedMiddleware(t, base, []*policy.Policy{policy.Must(policy.PerMinute("p0", 100, ip))})
			c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			m.SetFeedback(c)
			h := routed(router, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("X-Fail") != "" {
					base.Advance(5 * time.Millisecond)
					http.Error(w, "down", http.StatusBadGateway)
				}
			}), m.Handler)
			serve := func(fail bool) int {
				w := httptest.NewRecorder()
				r := httptest.NewRequest("GET", "/", nil)
				if fail {
					r.Header.Set("X-Fail", "1")
				}
				h.ServeHTTP(w, r)
				return w.Code
			}
			for range 20 {
				serve(false) // a healthy first minute
			}
			clock.Advance(time.Minute)
			stalled, release := clock.stallRead(2) // Begin's reading under the lock
			first := get(h)
			hangguard.Await(t, stalled, 10*time.Second, "the evaluating request's reading")
			clock.Advance(30 * time.Second)
			for range 20 {
				if code := serve(true); code != http.StatusBadGateway {
					t.Fatalf("failing request: %d", code)
				}
			}
			clock.Advance(time.Minute) // 150 s
			release()
			if code := hangguard.Await(t, first, 10*time.Second, "the evaluating request"); code != http.StatusOK {
				t.Fatalf("evaluating request: %d", code)
			}
			if err := c.Evaluate(); err != nil {
				t.Fatal(err)
			}
			if got, lim := c.Level(), limitsOf(m); got != 0.8 || lim != "80" {
				t.Errorf("level %v, limit %s; want 0.8, 80 (a healthy first minute, a slow and failing second)", got, lim)
			}
		})
	}
}

// TestControllerPendingWindowThresholdOfItsBaseline: Config.Baseline:
// whether a period's p99 exceeds LatencyFactor times "the baseline in
// force when the period began" is decided exactly; also for a period
// whose requests came while the one before it was still being judged,
// which sets that baseline. Here the first minute teaches a baseline of
// about 10 ms; its evaluation stalls, and the second minute's requests,
// a second each and failing, are slow against it: the level drops to
// 0.8. (The window the second minute's requests made, before the first
// was judged, had the threshold of no baseline: never slow, the level
// held at 1.)
func TestControllerPendingWindowThresholdOfItsBaseline(t *testing.T) {
	clock := &stallClock{Clock: algotest.NewClock(t0)}
	c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	observe(c, 20, 0, 10*time.Millisecond)
	clock.Advance(time.Minute)
	stalled, release := clock.stallRead(2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Observe(time.Second, 503)
	}()
	hangguard.Await(t, stalled, 10*time.Second, "the evaluating request's reading")
	clock.Advance(30 * time.Second)
	observe(c, 20, 20, time.Second)
	clock.Advance(time.Minute)
	release()
	hangguard.Await(t, done, 10*time.Second, "the evaluating request")
	if got := c.Baseline(); got < 10*time.Millisecond || got > 13*time.Millisecond {
		t.Fatalf("Baseline() = %v, want about 10ms, learned from the first minute", got)
	}
	if got := c.Level(); got != 0.8 {
		t.Errorf("level %v, want 0.8 (the second minute slow against the baseline the first taught, and failing)", got)
	}
}

// TestControllerStalledEvaluatorClockSetBack: the request whose
// evaluation stalled read the clock before it was set back (an hour
// before the first minute): its second reading restarts the period, and
// the request counts in the restarted period, not in one of the timeline
// before the correction, an hour ahead, left unjudged until the clock
// came back there.
func TestControllerStalledEvaluatorClockSetBack(t *testing.T) {
	clock := &stallClock{Clock: algotest.NewClock(t0)}
	c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond, MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	stalled, release := clock.stallRead(2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Observe(time.Second, 503) // read at 60 s
	}()
	hangguard.Await(t, stalled, 10*time.Second, "the evaluating request's reading")
	clock.Set(t0.Add(-time.Hour)) // corrected
	release()
	hangguard.Await(t, done, 10*time.Second, "the evaluating request")
	clock.Advance(time.Minute) // the restarted period is over
	if got := evaluated(t, c); got != 0.8 {
		t.Errorf("level %v at the restarted period's end, want 0.8 (its one request slow and failing)", got)
	}
}

// TestControllerReadingBeforeSetBackCountsInRestarted: a request that
// read the clock before it was set back, and is counted only after
// another request restarted the period at the corrected time (paused
// between its reading and its count), counts in the restarted period,
// not in one of the timeline before the correction, an hour ahead, left
// unjudged until the clock came back there.
func TestControllerReadingBeforeSetBackCountsInRestarted(t *testing.T) {
	clock := &lateClock{Clock: algotest.NewClock(t0)}
	c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond, MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(59 * time.Second)
	read, releaseRead := clock.late()
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Observe(time.Second, 503) // reads 59 s, held
	}()
	hangguard.Await(t, read, 10*time.Second, "the first request's reading")
	clock.Set(t0.Add(-time.Hour))       // corrected
	c.Observe(10*time.Millisecond, 200) // restarts the period
	releaseRead()
	hangguard.Await(t, done, 10*time.Second, "the first request")
	clock.Advance(time.Minute) // the restarted period is over
	if got := evaluated(t, c); got != 0.8 {
		t.Errorf("level %v at the restarted period's end, want 0.8 (a request slow and failing of its two)", got)
	}
}

// TestControllerEndDuringPendingEvaluation: the package documentation
// ("Requests that do not return"): a request that ends judges the period
// that ended before it stops being in flight, but not while another
// goroutine's evaluation of it is pending (paused): it then stops without
// being a sample of that period. Here, at level 0.8, a request in flight
// a minute (over a threshold of 20 ms) ends while the evaluation of the
// minute is stalled: the minute, without it, is quiet and healthy (0.9);
// judged with it, it would be slow and hold the level at 0.8.
func TestControllerEndDuringPendingEvaluation(t *testing.T) {
	clock := &stallClock{Clock: algotest.NewClock(t0)}
	c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond, MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	observe(c, 1, 1, time.Second) // slow and failing
	clock.Advance(time.Minute)
	if got := evaluated(t, c); got != 0.8 {
		t.Fatalf("level %v, want 0.8 (the test's premise)", got)
	}
	r := c.Begin() // in flight all the next minute
	clock.Advance(time.Minute)
	stalled, release := clock.stallRead(2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Begin().End() // the evaluating request
	}()
	hangguard.Await(t, stalled, 10*time.Second, "the evaluating request's reading")
	r.End() // stops while the evaluation is stalled
	release()
	hangguard.Await(t, done, 10*time.Second, "the evaluating request")
	if got := c.Level(); got != 0.9 {
		t.Errorf("level %v, want 0.9 (the hung request ended before the stalled evaluation judged the minute)", got)
	}
}

// evaluated evaluates c and returns its level then.
func evaluated(t *testing.T, c *adaptive.Controller) float64 {
	t.Helper()
	if err := c.Evaluate(); err != nil {
		t.Fatal(err)
	}
	return c.Level()
}
