package adaptive_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestPoliciesCopiedAtConstruction: New and NewFleet kept the caller's
// Policies slice, not a copy: a caller that reused it (building the next
// controller from the same Config, names filled in a loop) changed the
// policies an existing Controller or Fleet drives, past the check New
// made of them, and a write while it evaluated was a data race. The
// policies driven are those named at construction.
func TestPoliciesCopiedAtConstruction(t *testing.T) {
	names := []string{"p0"}
	m := newMiddleware(t, 100, 100)
	c, clock := newController(t, m, adaptive.Config{Baseline: time.Millisecond, Policies: names})
	names[0] = "p1"
	period(t, c, clock, 100, 10, 10*time.Millisecond) // 0.8
	if got := limitsOf(m); got != "80,100" {
		t.Errorf("Controller of p0, its Policies slice then changed to p1: limits %s, want 80,100", got)
	}

	names[0] = "p0"
	m = newMiddleware(t, 100, 100)
	fclock := algotest.NewClock(t0)
	f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Clock: fclock, Policies: names, Instances: func() int { return 2 }})
	if err != nil {
		t.Fatal(err)
	}
	names[0] = "p1"
	if err := f.Update(); err != nil {
		t.Fatal(err)
	}
	if got := limitsOf(m); got != "50,100" {
		t.Errorf("Fleet of p0, its Policies slice then changed to p1: limits %s, want 50,100", got)
	}
}
