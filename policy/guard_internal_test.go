package policy

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestMergeGuard: allowed when both are; the lower Remaining with its
// NextAfter (the later one on a tie); the longer RetryAfter, ResetAfter and
// Delay; the policy's Limit.
func TestMergeGuard(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name       string
		own, guard algorithms.Decision
		want       algorithms.Decision
	}{
		{"guard lower",
			algorithms.Decision{Allowed: true, Limit: 8, Remaining: 5, ResetAfter: 3 * s, NextAfter: 1 * s},
			algorithms.Decision{Allowed: true, Limit: 10, Remaining: 2, ResetAfter: 9 * s, NextAfter: 4 * s, Delay: 2 * s},
			algorithms.Decision{Allowed: true, Limit: 8, Remaining: 2, ResetAfter: 9 * s, NextAfter: 4 * s, Delay: 2 * s}},
		{"own lower",
			algorithms.Decision{Allowed: false, Limit: 8, Remaining: 0, RetryAfter: 7 * s, ResetAfter: 8 * s, NextAfter: 7 * s},
			algorithms.Decision{Allowed: true, Limit: 10, Remaining: 4, ResetAfter: 5 * s, NextAfter: 2 * s},
			algorithms.Decision{Allowed: false, Limit: 8, Remaining: 0, RetryAfter: 7 * s, ResetAfter: 8 * s, NextAfter: 7 * s}},
		{"tie",
			algorithms.Decision{Allowed: true, Limit: 8, Remaining: 3, ResetAfter: 3 * s, NextAfter: 1 * s},
			algorithms.Decision{Allowed: false, Limit: 10, Remaining: 3, RetryAfter: 6 * s, ResetAfter: 2 * s, NextAfter: 5 * s},
			algorithms.Decision{Allowed: false, Limit: 8, Remaining: 3, RetryAfter: 6 * s, ResetAfter: 3 * s, NextAfter: 5 * s}},
		{"guard holding the whole allowance",
			// A peek, or a give-back that made the policy whole: its
			// Remaining is at its Limit, which the guard, holding as
			// much, does not lower; the guard's waits for the units
			// beyond are not the policy's (NextAfter and ResetAfter
			// are 0 at the Limit).
			algorithms.Decision{Allowed: true, Limit: 8, Remaining: 8},
			algorithms.Decision{Allowed: true, Limit: 10, Remaining: 8, ResetAfter: 60 * s, NextAfter: 60 * s},
			algorithms.Decision{Allowed: true, Limit: 8, Remaining: 8}},
		{"queue admitting, guard denying",
			algorithms.Decision{Allowed: true, Limit: 8, Remaining: 2, ResetAfter: 4 * s, NextAfter: 1 * s, Delay: 3 * s},
			algorithms.Decision{Allowed: false, Limit: 10, Remaining: 0, RetryAfter: 5 * s, ResetAfter: 9 * s, NextAfter: 5 * s},
			algorithms.Decision{Allowed: false, Limit: 8, Remaining: 0, RetryAfter: 5 * s, ResetAfter: 9 * s, NextAfter: 5 * s}},
		{"queue denying, guard admitting with a Delay",
			algorithms.Decision{Allowed: false, Limit: 8, Remaining: 0, RetryAfter: 6 * s, ResetAfter: 8 * s, NextAfter: 6 * s},
			algorithms.Decision{Allowed: true, Limit: 10, Remaining: 3, ResetAfter: 4 * s, NextAfter: 2 * s, Delay: 2 * s},
			algorithms.Decision{Allowed: false, Limit: 8, Remaining: 0, RetryAfter: 6 * s, ResetAfter: 8 * s, NextAfter: 6 * s}},
	} {
		if got := mergeGuard(tc.own, tc.guard); got != tc.want {
			t.Errorf("%s: mergeGuard = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
