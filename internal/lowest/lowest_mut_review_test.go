package lowest

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestBeforeAdmittedIgnoresNextAfter: of two admitted decisions with the
// same remaining, the longer ResetAfter is reported (it is the reset a
// single-valued profile shows for an admitted one), whatever their
// NextAfter: the wait rule is for denied decisions only. Here a token
// bucket of 10/min with 2 left (next unit in 6s, full in 48s) against a
// fixed window with 2 left that resets in 10s.
func TestBeforeAdmittedIgnoresNextAfter(t *testing.T) {
	s := time.Second
	bucket := algorithms.Decision{Allowed: true, Limit: 10, Remaining: 2, NextAfter: 6 * s, ResetAfter: 48 * s}
	window := algorithms.Decision{Allowed: true, Limit: 10, Remaining: 2, NextAfter: 10 * s, ResetAfter: 10 * s}
	if got, rev := Before(bucket, window), Before(window, bucket); !got || rev {
		t.Errorf("Before(bucket, window) = %v, Before(window, bucket) = %v; want true, false", got, rev)
	}
}
