package adaptive_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestFirstLearnedBaselineTakesOneOutlier backs the package doc's claim
// ("What clients can do to it"): the first period a baseline is learned
// from sets it to its p99, which in a period of fewer than 100 requests
// is its slowest; one request of 10 s among 20 so sets a baseline of some
// 10 s, which healthy periods at 10 ms bring under 50 ms only after some
// forty periods. With MinSamples 100 the one request is not the p99.
func TestFirstLearnedBaselineTakesOneOutlier(t *testing.T) {
	c, clock := newController(t, newMiddleware(t, 100), adaptive.Config{})
	observe(c, 19, 0, 10*time.Millisecond)
	period(t, c, clock, 1, 0, 10*time.Second)
	if got := c.Baseline(); got < 10*time.Second {
		t.Fatalf("baseline %v after a first period of 20 requests, one of 10s; want 10s or more", got)
	}
	k := 0
	for c.Baseline() >= 50*time.Millisecond && k < 100 {
		period(t, c, clock, 100, 0, 10*time.Millisecond)
		k++
	}
	if k < 35 || k > 45 {
		t.Errorf("the baseline came under 50ms after %d healthy periods at 10ms, want some forty", k)
	}

	c, clock = newController(t, newMiddleware(t, 100), adaptive.Config{MinSamples: 100})
	observe(c, 99, 0, 10*time.Millisecond)
	period(t, c, clock, 1, 0, 10*time.Second)
	if got := c.Baseline(); got < 10*time.Millisecond || got > 12500*time.Microsecond {
		t.Errorf("MinSamples 100: baseline %v after a first period of 100 requests, one of 10s; want the 10ms bucket's", got)
	}
}
