package middleware

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestUnitsAfter pins when an admitted decision has need more units: the
// next unit's wait for one, then one unit per Window/Limit for the bucket
// kinds, never past ResetAfter, and ResetAfter where the rate cannot be
// used (no limit, no next unit, an overflowing product).
func TestUnitsAfter(t *testing.T) {
	bucket := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: 10 * time.Second}
	sliding := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 10, Window: 10 * time.Second}
	d := func(next, reset time.Duration) algorithms.Decision {
		return algorithms.Decision{Allowed: true, NextAfter: next, ResetAfter: reset}
	}
	for _, tc := range []struct {
		name string
		spec algorithms.Spec
		d    algorithms.Decision
		need int64
		want time.Duration
	}{
		{"one unit, sliding", sliding, d(time.Second, 10*time.Second), 1, time.Second},
		{"two more at the rate", bucket, d(time.Second, 10*time.Second), 3, 3 * time.Second},
		{"next unit now", bucket, d(0, 10*time.Second), 3, 2 * time.Second},
		{"no next unit", bucket, d(-1, 10*time.Second), 3, 10 * time.Second},
		{"past the reset", bucket, d(time.Second, 10*time.Second), 20, 10 * time.Second},
		{"product overflows", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1, Window: 4}, d(time.Second, 10*time.Second), 1<<62 + 1, 10 * time.Second},
	} {
		if got := unitsAfter(tc.spec, tc.d, tc.need); got != tc.want {
			t.Errorf("%s: unitsAfter(%v, %+v, %d) = %v, want %v", tc.name, tc.spec.Algorithm, tc.d, tc.need, got, tc.want)
		}
	}
}
