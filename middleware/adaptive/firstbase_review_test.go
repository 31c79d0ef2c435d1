package adaptive_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// TestBaselineNotLearnedFromAFailingPeriod: a learned baseline is not
// taken from a failing period, the first judged one included: a service
// started while a dependency is down (its requests time out after 30 s,
// or fail at once) would otherwise take the outage's latency for the
// normal, and a later overload (a p99 of 5 s and 10% errors) would not
// lower the limits for some twenty periods, or a p99 that is the
// service's normal (50 ms) would be slow for some thirty periods, each
// lowering the limits if more than 1% of its requests fail.
func TestBaselineNotLearnedFromAFailingPeriod(t *testing.T) {
	for _, tc := range []struct {
		name       string
		outage     time.Duration // latency of the first period's requests, all 503
		normal     time.Duration // of the second period's, healthy
		trouble    time.Duration // of the third period's, 10 errors of 100
		wantLevel  float64       // after the third period
		wantBaseUp time.Duration // the baseline after the second period is within [normal, wantBaseUp]
	}{
		{"timeouts", 30 * time.Second, 10 * time.Millisecond, 5 * time.Second, 0.8, 12500 * time.Microsecond},
		{"fast failures", time.Millisecond, 50 * time.Millisecond, 60 * time.Millisecond, 1, 62500 * time.Microsecond},
	} {
		c, clock := newController(t, newMiddleware(t, 100), adaptive.Config{})
		period(t, c, clock, 100, 100, tc.outage)
		if got := c.Level(); got != 1 {
			t.Fatalf("%s: level %v after the failing first period, want 1 (the baseline unknown: not slow)", tc.name, got)
		}
		period(t, c, clock, 100, 0, tc.normal)
		if got := c.Baseline(); got < tc.normal || got > tc.wantBaseUp {
			t.Errorf("%s: baseline %v after a failing period at %v and a healthy one at %v, want the healthy one's p99 (%v to %v)",
				tc.name, got, tc.outage, tc.normal, tc.normal, tc.wantBaseUp)
		}
		period(t, c, clock, 100, 10, tc.trouble)
		if got := c.Level(); got != tc.wantLevel {
			t.Errorf("%s: level %v after a period at %v with 10%% errors, want %v", tc.name, got, tc.trouble, tc.wantLevel)
		}
	}
}
