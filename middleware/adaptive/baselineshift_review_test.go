package adaptive_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestLearnedBaselineFollowsALastingShift: a learned baseline followed
// healthy periods only, and a period slow but not failing holds the
// level. So once the service's p99 settled above LatencyFactor times the
// baseline (a release, a heavier mix of requests, a baseline learned in a
// quiet hour), every period was slow, none moved the baseline, and a
// level lowered by one slow and failing period never climbed back: here
// 80% for ever of a service answering every request, without an error,
// at 30 ms. A period slow and not failing must move a learned baseline
// too (toward the threshold, LatencyFactor times it, no further: as fast
// as a healthy period can), so that the new normal stops being slow and
// the level recovers. A configured Baseline is the operator's and stays.
func TestLearnedBaselineFollowsALastingShift(t *testing.T) {
	m := newMiddleware(t, 100)
	c, clock := newController(t, m, adaptive.Config{})
	period(t, c, clock, 100, 0, 10*time.Millisecond) // learns about 10 ms
	period(t, c, clock, 100, 5, 50*time.Millisecond) // slow and failing: 0.8
	if got := c.Level(); got != 0.8 {
		t.Fatalf("level %v after a slow and failing period, want 0.8", got)
	}
	for range 10 {
		period(t, c, clock, 100, 0, 30*time.Millisecond)
	}
	if got := c.Level(); got != 1 {
		t.Errorf("level %v after ten periods at 30 ms without an error (baseline %v), want 1", got, c.Baseline())
	}
	if b := c.Baseline(); b < 15*time.Millisecond || b > 30*time.Millisecond {
		t.Errorf("baseline %v after ten periods at 30 ms, want between 15 ms (30 ms no longer slow) and 30 ms", b)
	}

	// One slow period, not failing, moves it no further than an eighth of
	// the way to the threshold, however slow.
	c, clock = newController(t, newMiddleware(t, 100), adaptive.Config{})
	period(t, c, clock, 100, 0, 10*time.Millisecond)
	b := c.Baseline()
	period(t, c, clock, 100, 0, time.Hour)
	if got, want := c.Baseline(), b+b/8; got != want {
		t.Errorf("baseline %v after a period at an hour, from %v, want %v (an eighth of the way to twice it)", got, b, want)
	}

	// Configured: kept, and the level held while the service is slow.
	m = newMiddleware(t, 100)
	c, clock = newController(t, m, adaptive.Config{Baseline: 10 * time.Millisecond})
	period(t, c, clock, 100, 5, 50*time.Millisecond)
	for range 10 {
		period(t, c, clock, 100, 0, 30*time.Millisecond)
	}
	if got, b := c.Level(), c.Baseline(); got != 0.8 || b != 10*time.Millisecond {
		t.Errorf("configured baseline: level %v, baseline %v after ten slow periods; want 0.8, 10ms", got, b)
	}
}
