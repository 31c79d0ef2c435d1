package adaptive_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestControllerBeginReadBeforeSetBackCountsFromTheRestart: a clock set
// back restarts the period, "the requests in flight count as begun at
// that time at the latest" (Config.Clock): also one that read the clock
// before it was set back and is counted in flight only after another
// request restarted the period (paused between its reading and its
// count), and finds the evaluation's lock busy (no second reading). Here, at level 0.8, such a request stays in flight all the
// restarted minute (over a 20 ms threshold), beside one healthy request:
// the minute is slow and holds the level; taken as begun at its reading,
// an hour ahead of the corrected clock, it would not be known over the
// threshold before the clock came back there, and the minute would be
// healthy (0.9).
func TestControllerBeginReadBeforeSetBackCountsFromTheRestart(t *testing.T) {
	clock := &lateClock{Clock: algotest.NewClock(t0)}
	c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond, MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	observe(c, 1, 1, time.Second) // slow and failing
	clock.Advance(time.Minute)
	if got := evaluated(t, c); got != 0.8 {
		t.Fatalf("level %v, want 0.8 (the test's premise)", got)
	}
	clock.Advance(59 * time.Second)
	read, releaseRead := clock.late()
	begun := make(chan interface{ End() }, 1)
	go func() { begun <- c.Begin() }() // reads 119 s, held
	hangguard.Await(t, read, 10*time.Second, "the request's reading")
	clock.Set(t0.Add(-time.Hour))       // corrected
	c.Observe(10*time.Millisecond, 200) // restarts the period; healthy
	// An Evaluate (a ticker's) takes the lock and is paused after its
	// reading: the request's Begin, released, finds the lock busy and
	// does not read the clock again.
	evRead, releaseEv := clock.late()
	evDone := make(chan error, 1)
	go func() { evDone <- c.Evaluate() }()
	hangguard.Await(t, evRead, 10*time.Second, "the Evaluate's reading")
	releaseRead()
	r := hangguard.Await(t, begun, 10*time.Second, "the request's Begin")
	defer r.End()
	releaseEv()
	if err := hangguard.Await(t, evDone, 10*time.Second, "the Evaluate"); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute) // the restarted period is over, the request in flight all of it
	if got := evaluated(t, c); got != 0.8 {
		t.Errorf("level %v, want 0.8 (the restarted minute slow: a request in flight all of it)", got)
	}
}
