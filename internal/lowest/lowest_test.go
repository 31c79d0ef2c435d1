package lowest

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// Each rule of the order decides only where the ones before it tie, and a
// full tie is before neither way.
func TestBeforeOrder(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		name string
		d, b algorithms.Decision
	}{
		{"denied before admitted, whatever its remaining", algorithms.Decision{Remaining: 5}, algorithms.Decision{Allowed: true, Remaining: 0}},
		{"lower remaining", algorithms.Decision{Allowed: true, Remaining: 1, ResetAfter: s}, algorithms.Decision{Allowed: true, Remaining: 2, ResetAfter: 9 * s}},
		{"denied: the longer RetryAfter", algorithms.Decision{RetryAfter: 3 * s}, algorithms.Decision{RetryAfter: 2 * s, ResetAfter: 9 * s}},
		{"denied: the longer NextAfter counts as a wait", algorithms.Decision{RetryAfter: s, NextAfter: 4 * s}, algorithms.Decision{RetryAfter: 3 * s, ResetAfter: 9 * s}},
		{"then the longer ResetAfter", algorithms.Decision{Allowed: true, ResetAfter: 60 * s}, algorithms.Decision{Allowed: true, ResetAfter: s}},
		{"denied, same wait: the longer ResetAfter", algorithms.Decision{RetryAfter: s, ResetAfter: 60 * s}, algorithms.Decision{RetryAfter: s, ResetAfter: s}},
	} {
		if !Before(c.d, c.b) || Before(c.b, c.d) {
			t.Errorf("%s: Before(d, b) = %v, Before(b, d) = %v; want true, false", c.name, Before(c.d, c.b), Before(c.b, c.d))
		}
	}
	tie := algorithms.Decision{Allowed: true, Remaining: 3, ResetAfter: s}
	if Before(tie, tie) {
		t.Error("a full tie is before itself")
	}
}
