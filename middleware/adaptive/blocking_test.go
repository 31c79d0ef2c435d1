package adaptive_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestBlockingInstancesHoldsOneCheck: while a Check waits on a slow
// Instances, the other Checks return at once with the limits as they
// were; the count read is applied when Instances returns.
func TestBlockingInstancesHoldsOneCheck(t *testing.T) {
	m := newMiddleware(t, 100)
	clock := algotest.NewClock(t0)
	entered, release := make(chan struct{}), make(chan struct{})
	n := 2
	f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Clock: clock, Instances: func() int {
		if n == 4 {
			entered <- struct{}{}
			<-release
		}
		return n
	}})
	if err != nil {
		t.Fatal(err)
	}
	n = 4
	clock.Advance(10 * time.Second)
	done := make(chan error)
	go func() { done <- f.Check() }()
	<-entered
	for range 100 {
		if err := f.Check(); err != nil {
			t.Fatal(err)
		}
	}
	if got := limitsOf(m); got != "50" {
		t.Errorf("while Instances blocks: %s, want 50 (2 instances)", got)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := limitsOf(m); got != "25" {
		t.Errorf("after Instances returned 4: %s, want 25", got)
	}
}
