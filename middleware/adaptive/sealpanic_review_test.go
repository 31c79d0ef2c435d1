package adaptive_test

import (
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// panicClock is a clock whose reading number at (counted from 1) panics.
type panicClock struct {
	*algotest.Clock
	mu    sync.Mutex
	reads int
	at    int
}

func (c *panicClock) Now() time.Time {
	c.mu.Lock()
	c.reads++
	boom := c.reads == c.at
	c.mu.Unlock()
	if boom {
		panic("clock read failed")
	}
	return c.Clock.Now()
}

// panicRead makes the n-th reading from now on panic.
func (c *panicClock) panicRead(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.reads + n
}

// TestPanicBetweenReadingAndCounting: a request that panics after its
// first reading of the clock and before it is counted (here its second
// reading, under the evaluation's lock, panics) leaves no window with a
// count begun: the evaluation that seals the period's window next does
// not wait for it for ever, and judges the period by the requests
// counted. Here a second minute of two requests, one slow and failing
// (MinSamples 1), after the panics: judged, it lowers the level to 0.8.
func TestPanicBetweenReadingAndCounting(t *testing.T) {
	clock := &panicClock{Clock: algotest.NewClock(t0)}
	c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond, MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	c.Observe(10*time.Millisecond, 200) // a healthy first minute
	clock.Advance(time.Minute)
	for _, n := range []int{2, 1} { // under the lock, then before it
		clock.panicRead(n)
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("reading %d: no panic", n)
				}
			}()
			c.Observe(time.Second, 503)
		}()
	}
	done := make(chan float64)
	go func() {
		c.Observe(10*time.Millisecond, 200) // judges the first minute (healthy), counts in the second
		c.Observe(time.Second, 503)         // slow and failing
		clock.Advance(time.Minute)
		if err := c.Evaluate(); err != nil {
			t.Error(err)
		}
		done <- c.Level()
	}()
	if got := hangguard.Await(t, done, 10*time.Second, "the evaluations after the panics"); got != 0.8 {
		t.Errorf("level %v, want 0.8 (a request of the second minute's two slow and failing)", got)
	}
}
