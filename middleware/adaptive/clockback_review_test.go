package adaptive_test

import (
	"testing"
	"time"

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
