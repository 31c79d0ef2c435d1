package adaptive_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestClockSetBackRestartsThePeriod: an injected clock without monotonic
// readings (a clock of the application's own, one shared with a store)
// can be set back: a host's clock a day ahead, then corrected. The
// period in course ended a day after the corrected time, so no period
// ended for a day: a limit lowered before the correction stayed lowered
// that long, healthy or not, as a Controller's periods are judged only
// when they end. A clock set back before the period's start must restart
// the period at the time read (its requests kept), so that the next
// periods end a Period apart again; through Observe and Evaluate.
func TestClockSetBackRestartsThePeriod(t *testing.T) {
	for _, how := range []string{"Evaluate", "Observe"} {
		t.Run(how, func(t *testing.T) {
			m := newMiddleware(t, 100)
			c, clock := newController(t, m, adaptive.Config{Baseline: time.Millisecond})
			clock.Advance(24 * time.Hour)                     // the clock a day ahead
			period(t, c, clock, 100, 10, 10*time.Millisecond) // slow and failing: 0.8
			if got := c.Level(); got != 0.8 {
				t.Fatalf("level %v after a slow and failing period, want 0.8", got)
			}
			clock.Set(t0.Add(time.Hour)) // corrected
			for i, want := range []string{"90", "100"} {
				for range 100 {
					c.Observe(time.Millisecond, 200)
				}
				clock.Advance(time.Minute)
				if how == "Evaluate" {
					if err := c.Evaluate(); err != nil {
						t.Fatal(err)
					}
				} else {
					c.Observe(time.Millisecond, 200) // the first request after the period judges it
				}
				if got := limitsOf(m); got != want {
					t.Fatalf("healthy period %d after the clock was set back a day: limit %s, want %s", i+1, got, want)
				}
			}
		})
	}
}

// TestFleetClockSetBackReadsAgain: a Fleet's Check read the count again
// only once its injected clock reached Every past the last reading; a
// clock set back (a day ahead, corrected) so held the share of the count
// read before for a day, however the fleet changed meanwhile (here from 2
// instances to 4: each enforced 50 of a cluster-wide 100, the fleet 200).
// A clock read before the last reading must count as Every passed.
func TestFleetClockSetBackReadsAgain(t *testing.T) {
	m := newMiddleware(t, 100)
	clock := algotest.NewClock(t0)
	n := 2
	f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Clock: clock, Every: time.Minute, Instances: func() int { return n }})
	if err != nil {
		t.Fatal(err)
	}
	clock.Advance(24 * time.Hour) // the clock a day ahead
	if err := f.Check(); err != nil {
		t.Fatal(err)
	}
	clock.Set(t0.Add(time.Hour)) // corrected
	n = 4
	if err := f.Check(); err != nil {
		t.Fatal(err)
	}
	if got := limitsOf(m); got != "25" || f.Instances() != 4 {
		t.Fatalf("after the clock was set back a day and the fleet grew to 4: limit %s for %d instances, want 25 for 4", got, f.Instances())
	}
	// Read again Every after that reading, not before.
	n = 5
	clock.Advance(time.Minute - 1)
	f.Check()
	if got := limitsOf(m); got != "25" {
		t.Errorf("within Every of the reading: limit %s, want 25 (not read again)", got)
	}
	clock.Advance(1)
	f.Check()
	if got := limitsOf(m); got != "20" {
		t.Errorf("Every after the reading: limit %s, want 20", got)
	}
}
