package algorithms_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestReviewOneBucketIsTheFixedWindow pins what the package documentation
// (and the README's table) says of sliding_buckets: one bucket is the fixed
// window. The same random calls, with instants that go forward by up to
// two windows and now and then back, and costs up to the limit, get the
// same Decision, field by field, under both kinds.
func TestReviewOneBucketIsTheFixedWindow(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 1))
	for trial := range 60 {
		limit := []int64{1, 2, 5, 1000, algorithms.MaxLimit}[trial%5]
		w := []time.Duration{algorithms.MinWindow, 999_999_937, time.Hour, algorithms.MaxWindow}[r.IntN(4)]
		fixed := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: limit, Window: w}
		one := algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: limit, Window: w, Buckets: 1}
		s, clk := newStore(t)
		clk.Advance(time.Duration(r.Int64N(int64(w))))
		for step := range 40 {
			switch g := r.IntN(8); {
			case g < 2:
			case g < 6:
				clk.Advance(time.Duration(r.Int64N(2 * int64(w))))
			default:
				clk.Advance(-time.Duration(r.Int64N(int64(w))))
			}
			n := 1 + r.Int64N(limit)
			if r.IntN(2) == 0 {
				n = 1
			}
			df := take(t, s, algorithms.Check{Spec: fixed, Key: "k", Cost: n})[0]
			db := take(t, s, algorithms.Check{Spec: one, Key: "k", Cost: n})[0]
			if df != db {
				t.Fatalf("trial %d step %d, cost %d, %v: fixed_window %+v, one bucket %+v", trial, step, n, w, df, db)
			}
		}
	}
}
