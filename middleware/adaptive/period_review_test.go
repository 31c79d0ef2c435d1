package adaptive_test

import (
	"math"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestHugePeriodEndsInTheFuture: the end of the next period was the old
// end plus (periods passed)·Period, a product that overflowed for a
// Period above about 146 years once two had passed (and for any Period
// after a clock jump of 292 years): the period then "ended" in the past,
// and every request judged one of its own, lowering the limit within
// what is one period. Config accepts any positive Period, so one of two
// centuries must keep the requests that follow in one period, judged
// once, when it ends. A clock that jumps further than the 292 years a
// Duration holds starts the next period at the request that finds it.
func TestHugePeriodEndsInTheFuture(t *testing.T) {
	const century = 100 * 365 * 24 * time.Hour
	cases := []struct {
		name    string
		period  time.Duration
		advance time.Duration // twice: two periods or more go by idle
	}{
		{"Period of two centuries", 2 * century, 2 * century},
		{"Period of MaxInt64/2+1", math.MaxInt64/2 + 1, math.MaxInt64/2 + 1},
		// 2·advance − 1 minute after the first end: just under 2^63 ns,
		// in the last minute before the product overflows.
		{"Period of a minute, clock 292 years on", time.Minute, 9_223_372_030_000_000_000/2 + time.Minute/2},
		// Beyond 2^63 ns, where the time between two instants saturates.
		{"Period of a minute, clock jumps of MaxInt64", time.Minute, math.MaxInt64},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := newMiddleware(t, 100)
			clock := algotest.NewClock(t0)
			c, err := adaptive.New(m, adaptive.Config{Clock: clock, Period: tc.period, Baseline: time.Millisecond, MinSamples: 1})
			if err != nil {
				t.Fatal(err)
			}
			clock.Advance(tc.advance)
			clock.Advance(tc.advance)
			// The first request ends the idle periods (healthy); it and
			// the next ones are in the new period, which has not ended.
			for i := range 3 {
				c.Observe(10*time.Millisecond, 503)
				if got := c.Level(); got != 1 {
					t.Fatalf("after request %d of a new period: level %v, want 1 (the period has not ended)", i+1, got)
				}
			}
			if err := c.Evaluate(); err != nil {
				t.Fatal(err)
			}
			if got, lim := c.Level(), limitsOf(m); got != 1 || lim != "100" {
				t.Errorf("Evaluate within the period: level %v, limit %s; want 1, 100", got, lim)
			}
			// At its end, the period of three slow failures is judged,
			// once: the limit drops to 80%, and no healthy period follows.
			clock.Advance(tc.period)
			if err := c.Evaluate(); err != nil {
				t.Fatal(err)
			}
			if got, lim := c.Level(), limitsOf(m); got != 0.8 || lim != "80" {
				t.Errorf("Evaluate at the period's end: level %v, limit %s; want 0.8, 80", got, lim)
			}
		})
	}
}
