package algorithms_test

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestMemoryStoreAtTheEndsOfUnixNanoseconds: a clock that reads an instant
// within a day of the ends of int64 Unix nanoseconds (after 2262-04-10 UTC,
// or, as a wall clock past 2262-04-11T23:47:16Z wraps, just after the
// smallest int64) gets decisions that keep every limit and whose durations
// are within what the Spec allows: a key admits at most its capacity at
// one instant, and its RetryAfter, ResetAfter and NextAfter are never
// negative nor more than two windows. (A token_bucket, leaky_bucket or
// leaky_queue key within a window of the largest instant computed the
// instant it would be full or free past it, which wrapped to a negative
// one: the key was always full, or free, and admitted every request.)
func TestMemoryStoreAtTheEndsOfUnixNanoseconds(t *testing.T) {
	specs := []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 10, Window: 24 * time.Hour},
		{Algorithm: algorithms.SlidingWindow, Limit: 10, Window: 24 * time.Hour},
		{Algorithm: algorithms.SlidingLog, Limit: 10, Window: 24 * time.Hour},
		{Algorithm: algorithms.SlidingBuckets, Limit: 10, Window: 24 * time.Hour, Buckets: 24},
		{Algorithm: algorithms.TokenBucket, Limit: 10, Window: 24 * time.Hour},
		{Algorithm: algorithms.LeakyBucket, Limit: 10, Window: 24 * time.Hour},
		{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: 24 * time.Hour, MaxDelay: 24 * time.Hour},
		{Algorithm: algorithms.TokenBucket, Limit: algorithms.MaxLimit, Window: time.Minute},
		{Algorithm: algorithms.LeakyQueue, Limit: algorithms.MaxLimit, Window: time.Minute},
	}
	instants := []int64{
		math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 - int64(time.Hour), math.MaxInt64 - int64(23*time.Hour),
		math.MinInt64, math.MinInt64 + 1, math.MinInt64 + int64(time.Hour), math.MinInt64 + int64(47*time.Hour),
	}
	for _, spec := range specs {
		for _, at := range instants {
			t.Run(spec.String()+"/"+strconv.FormatInt(at, 10), func(t *testing.T) {
				s, clk := newStore(t)
				clk.Set(time.Unix(0, at))
				c := algorithms.Check{Spec: spec, Key: "k", Cost: spec.Capacity()}
				var got []algorithms.Decision
				for i := range 3 {
					got = append(got, take(t, s, c)[0])
					c.Cost = 1
					if i == 1 {
						clk.Set(time.Unix(0, at+1-2*(at&1))) // a nanosecond on, or back at the top
					}
				}
				if !got[0].Allowed {
					t.Errorf("the first request, of the whole capacity %d, denied: %+v", spec.Capacity(), got[0])
				}
				for i, d := range got {
					if i > 0 && d.Allowed {
						t.Errorf("request %d, of 1 after the whole capacity at one instant, admitted: %+v", i+1, d)
					}
					for _, x := range []time.Duration{d.RetryAfter, d.ResetAfter, d.NextAfter, d.Delay} {
						if x < 0 || x > 2*spec.Window+time.Nanosecond {
							t.Errorf("request %d: %+v has a duration outside [0, 2 windows]", i+1, d)
							break
						}
					}
				}
			})
		}
	}
}
