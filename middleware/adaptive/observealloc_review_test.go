package adaptive_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestObserveEndAllocatesNothing: observing a request and counting one in
// flight out (Observe, Begin and End) allocate nothing within a period;
// and, with a configured Baseline (the threshold of every period known in
// advance), nor while the evaluation of an earlier period is pending: the
// window of the period a request is observed in is made once, and no
// latency is kept to be judged later (which would take memory for every
// request for as long as the evaluation stays pending).
func TestObserveEndAllocatesNothing(t *testing.T) {
	clock := &stallClock{Clock: algotest.NewClock(t0)}
	c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock, Baseline: time.Millisecond, MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	c.Observe(5*time.Millisecond, 200)
	if got := testing.AllocsPerRun(1000, func() { c.Observe(5*time.Millisecond, 200) }); got != 0 {
		t.Errorf("Observe: %v allocations per request, want 0", got)
	}
	if got := testing.AllocsPerRun(1000, func() { c.Begin().End() }); got != 0 {
		t.Errorf("Begin and End: %v allocations per request, want 0", got)
	}

	clock.Advance(time.Minute) // the first minute is over
	stalled, release := clock.stallRead(2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Observe(5*time.Millisecond, 200)
	}()
	hangguard.Await(t, stalled, 10*time.Second, "the evaluating request's reading")
	defer func() {
		release()
		hangguard.Await(t, done, 10*time.Second, "the evaluating request")
	}()
	// The allocations of the whole process are counted: the fewest of a
	// few measurements, each in a period of its own (one window made).
	const requests = 10_000
	fewest := uint64(1 << 63)
	var ms runtime.MemStats
	for range 3 {
		clock.Advance(time.Minute)
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		for range requests {
			c.Observe(5*time.Millisecond, 200)
		}
		runtime.ReadMemStats(&ms)
		fewest = min(fewest, ms.Mallocs-before)
	}
	if fewest > 2 {
		t.Errorf("%d allocations for %d requests observed in a period while an evaluation is pending, want at most 2 (its window)", fewest, requests)
	}
}
