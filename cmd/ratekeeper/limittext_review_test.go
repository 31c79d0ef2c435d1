package main

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestLimitTextOneBucket: check's table said "1 buckets" for a
// sliding_buckets policy of one bucket (a fixed window, which DESIGN
// allows).
func TestLimitTextOneBucket(t *testing.T) {
	for _, tc := range []struct {
		buckets int
		want    string
	}{
		{1, "10 per 1m0s, 1 bucket"},
		{6, "10 per 1m0s, 6 buckets"},
	} {
		s := algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 10, Window: time.Minute, Buckets: tc.buckets}
		if got := limitText(s); got != tc.want {
			t.Errorf("limitText(%d buckets) = %q, want %q", tc.buckets, got, tc.want)
		}
	}
}
