package adaptive_test

import (
	"math"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestExtremeLimits: limits of 1, 3, 10^9-1 and the largest (10^9) are
// lowered by Decrease down to the floor (rounded up, at least 1), held
// there by a flapping signal, and restored exactly to the configured
// limit (no drift from the multiplications) once healthy.
func TestExtremeLimits(t *testing.T) {
	m := newMiddleware(t, 1, 3, 999_999_999, algorithms.MaxLimit)
	clock := algotest.NewClock(t0)
	c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	bad := func() { period(t, c, clock, 100, 10, 10*time.Millisecond) }
	good := func() { period(t, c, clock, 100, 0, time.Millisecond) }
	bad()
	if got, want := limitsOf(m), "1,2,799999999,800000000"; got != want {
		t.Errorf("level 0.8: %s, want %s", got, want)
	}
	for range 10 { // flapping: bad, good, bad, ...
		bad()
		good()
	}
	for range 10 {
		bad()
	}
	if got, want := limitsOf(m), "1,2,500000000,500000000"; got != want {
		t.Errorf("at the floor: %s, want %s", got, want)
	}
	for range 5 {
		good()
	}
	if got, want := limitsOf(m), "1,3,999999999,1000000000"; got != want {
		t.Errorf("restored: %s, want %s", got, want)
	}
	if c.Level() != 1 {
		t.Errorf("level %v, want 1", c.Level())
	}
	_, err = adaptive.NewFleet(m, adaptive.FleetConfig{Clock: clock, Instances: func() int { return math.MaxInt }})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := limitsOf(m), "1,1,1,1"; got != want {
		t.Errorf("fleet of MaxInt: %s, want %s", got, want)
	}
}
