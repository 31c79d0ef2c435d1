package middleware

import (
	"math"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestCarryFor: how long a reload's guard lasts: two windows, three for
// sliding_window, and for the buckets the time a full one drains plus a
// window, saturating instead of overflowing.
func TestCarryFor(t *testing.T) {
	for _, tc := range []struct {
		spec algorithms.Spec
		want time.Duration
	}{
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}, 2 * time.Minute},
		{algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 10, Window: time.Minute}, 2 * time.Minute},
		{algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 10, Window: time.Minute, Buckets: 6}, 2 * time.Minute},
		{algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 10, Window: time.Minute}, 3 * time.Minute},
		{algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Second, Burst: 25}, 3500 * time.Millisecond},
		{algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 3, Window: time.Second, Burst: 2}, time.Second + 666666667},
		{algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1, Window: 24 * time.Hour, Burst: algorithms.MaxLimit}, math.MaxInt64},
	} {
		if got := carryFor(tc.spec); got != tc.want {
			t.Errorf("carryFor(%v) = %v, want %v", tc.spec, got, tc.want)
		}
	}
	if got := addSat(math.MaxInt64-5, 10); got != math.MaxInt64 {
		t.Errorf("addSat past MaxInt64 = %d", got)
	}
	if got := addSat(100, 10); got != 110 {
		t.Errorf("addSat(100, 10) = %d", got)
	}
}
