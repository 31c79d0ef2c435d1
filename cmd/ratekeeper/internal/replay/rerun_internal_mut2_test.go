package replay

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestWithLimitScalesBurst: a trial at another limit scales a bucket's
// burst alike, rounded up, at least 1 and at most MaxLimit; a spec
// without a burst keeps none.
func TestWithLimitScalesBurst(t *testing.T) {
	tb := func(limit, burst int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: limit, Window: time.Minute, Burst: burst}
	}
	for _, tc := range []struct {
		spec  algorithms.Spec
		limit int64
		want  algorithms.Spec
	}{
		{tb(10, 25), 4, tb(4, 10)},   // 25 x 4/10 = 10
		{tb(10, 7), 3, tb(3, 3)},     // 2.1 rounded up
		{tb(10, 25), 3, tb(3, 8)},    // 7.5 rounded up
		{tb(10, 1), 1, tb(1, 1)},     // 0.1 rounded up
		{tb(10, 20), 15, tb(15, 30)}, // scaled up
		{tb(10, algorithms.MaxLimit), 20, tb(20, algorithms.MaxLimit)},
		{tb(10, 0), 4, tb(4, 0)},
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}, 4, algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 4, Window: time.Minute}},
	} {
		if got := withLimit(tc.spec, tc.limit); got != tc.want {
			t.Errorf("withLimit(%v, %d) = %v (burst %d), want burst %d", tc.spec, tc.limit, got, got.Burst, tc.want.Burst)
		}
	}
}

// TestCompareSpecsBuckets: the comparison's sliding_buckets has the
// policy's buckets, or 10 when the policy has none; the other kinds none.
func TestCompareSpecsBuckets(t *testing.T) {
	for _, tc := range []struct {
		spec algorithms.Spec
		want int
	}{
		{algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: time.Minute, Buckets: 6}, 6},
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Minute}, 10},
	} {
		specs := compareSpecs(tc.spec)
		found := false
		for _, s := range specs {
			if s.Limit != 5 || s.Window != time.Minute {
				t.Errorf("%v: compared under %v, want the same limit and window", tc.spec, s)
			}
			if s.Algorithm == algorithms.SlidingBuckets {
				found = true
				if s.Buckets != tc.want {
					t.Errorf("%v: sliding_buckets with %d buckets, want %d", tc.spec, s.Buckets, tc.want)
				}
			} else if s.Buckets != 0 {
				t.Errorf("%v: %s with %d buckets", tc.spec, s.Algorithm, s.Buckets)
			}
		}
		if !found {
			t.Errorf("%v: no sliding_buckets among %v", tc.spec, specs)
		}
	}
}
