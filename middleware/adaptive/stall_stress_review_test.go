package adaptive_test

import (
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestStalledEvaluatorManyGoroutinesCrossingPeriods: while the evaluation
// of a period is stalled (its goroutine paused between taking the lock and
// reading the clock again), goroutines observe requests as the clock
// crosses many period boundaries (and, in one case, is set back): once it
// is released and the periods are judged, every request is counted once
// in the windows, each over the threshold it is judged against (all are
// slow), none left provisional, every ended window sealed and none with
// a request still counting. Run under -race.
func TestStalledEvaluatorManyGoroutinesCrossingPeriods(t *testing.T) {
	for _, setBack := range []bool{false, true} {
		name := "forward"
		if setBack {
			name = "set back"
		}
		t.Run(name, func(t *testing.T) {
			clock := &stallClock{Clock: algotest.NewClock(t0)}
			c, err := adaptive.New(newMiddleware(t, 100), adaptive.Config{Clock: clock, Period: 100 * time.Millisecond,
				Baseline: time.Millisecond, MinSamples: 1})
			if err != nil {
				t.Fatal(err)
			}
			walk := adaptive.WindowWalk(c)
			clock.Advance(100 * time.Millisecond) // the first period is over
			stalled, release := clock.stallRead(2)
			done := make(chan struct{})
			go func() {
				defer close(done)
				c.Observe(5*time.Millisecond, 200)
			}()
			hangguard.Await(t, stalled, 10*time.Second, "the evaluating request's reading")
			// Each goroutine moves the clock on 3 ms every 20 requests: some
			// 18 periods of 100 ms pass; the evaluation is released midway
			// (judging while requests count), and the clock set back
			// before that in one case.
			const goroutines, each = 4, 3000
			var wg sync.WaitGroup
			var releaseOnce sync.Once
			for g := range goroutines {
				wg.Go(func() {
					for i := range each {
						// All over the threshold of 2 ms.
						c.Observe(time.Duration(3+(i+g)%7)*time.Millisecond, 200)
						if i%20 == 0 {
							clock.Advance(3 * time.Millisecond)
						}
						if g == 0 && i == each/3 && setBack {
							clock.Set(t0.Add(-time.Hour))
						}
						if g == 0 && i == each*2/3 {
							releaseOnce.Do(release)
						}
					}
				})
			}
			wg.Wait()
			hangguard.Await(t, done, 10*time.Second, "the evaluating request")
			clock.Advance(time.Second)
			if err := c.Evaluate(); err != nil {
				t.Fatal(err)
			}
			n, over, prov, unsealed, counting := walk()
			if want := int64(goroutines*each + 1); n != want || over != n {
				t.Errorf("%d requests counted in the windows, %d of them over the threshold, want %d, all", n, over, want)
			}
			if prov != 0 || unsealed != 0 || counting != 0 {
				t.Errorf("%d windows provisional, %d ended and not sealed, %d with a request counting, want none", prov, unsealed, counting)
			}
		})
	}
}
