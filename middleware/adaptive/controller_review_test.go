package adaptive_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestLearnedBaselineUpToAQuarterAbove: a learned baseline is the upper
// bound of the histogram bucket holding the p99. The buckets split each
// power of two in four, so a p99 at the bottom of a power of two (2^20 ns)
// is read as the top of its bucket, 2^20 + 2^18 − 1 ns: almost 25% above
// the true p99 (Config.Baseline said at most 19%). One at the top of its
// power of two (2^21 − 1 ns) is read exactly.
func TestLearnedBaselineUpToAQuarterAbove(t *testing.T) {
	for _, tc := range []struct {
		p99, want time.Duration
	}{
		{1 << 20, 1<<20 + 1<<18 - 1},
		{1<<21 - 1, 1<<21 - 1},
	} {
		c, clock := newController(t, newMiddleware(t, 100), adaptive.Config{MinSamples: 1})
		c.Observe(tc.p99, 200)
		clock.Advance(time.Minute)
		if err := c.Evaluate(); err != nil {
			t.Fatal(err)
		}
		got := c.Baseline()
		if got != tc.want {
			t.Errorf("p99 of %d ns: baseline %d ns, want %d", tc.p99, got, tc.want)
		}
		if over := float64(got-tc.p99) / float64(tc.p99); over >= 0.25 {
			t.Errorf("p99 of %d ns: baseline %.1f%% above it, want less than 25%%", tc.p99, 100*over)
		}
	}
}

// TestDefaultFloorIsHalf: by default (Config.Floor 0.5, the README's
// "never below a floor (default 50%)") slow and failing periods take a
// limit of 100 to 80% of itself at a time, 80, 64, 51, and then no lower than
// 50, where a healthy period steps it up by 10 of the configured 100.
func TestDefaultFloorIsHalf(t *testing.T) {
	m := newMiddleware(t, 100)
	c, clock := newController(t, m, adaptive.Config{Baseline: time.Millisecond})
	for _, want := range []string{"80", "64", "51", "50", "50"} {
		period(t, c, clock, 20, 20, 10*time.Millisecond)
		if got := limitsOf(m); got != want {
			t.Fatalf("after a slow and failing period: limit %s, want %s", got, want)
		}
	}
	period(t, c, clock, 20, 0, time.Millisecond)
	if got := limitsOf(m); got != "60" {
		t.Errorf("after a healthy period at the floor: limit %s, want 60", got)
	}
}
