package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestMemoryStoreTakeIntoRepeatedKeyAllocations pins the exception that
// TakeInto's documentation makes to its promise of no allocation on held
// keys: a key of a fixed-size kind named twice in one Take costs nothing,
// and so does a sliding_log key holding one logged instant (its one event,
// in line, is copied by value), while a sliding_log key holding two or
// more, or a sliding_buckets key, named twice has its state copied for the
// second check, which allocates.
func TestMemoryStoreTakeIntoRepeatedKeyAllocations(t *testing.T) {
	s, clk := newStore(t)
	dst := make([]algorithms.Decision, 2)
	for _, tc := range []struct {
		spec     algorithms.Spec
		instants int // the instants the key is given before, for sliding_log
		allocs   bool
	}{
		{algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: algorithms.MaxLimit, Window: time.Second}, 1, false},
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: algorithms.MaxLimit, Window: time.Second}, 1, false},
		{algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: algorithms.MaxLimit, Window: time.Second}, 1, false},
		{algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: algorithms.MaxLimit - 1, Window: time.Second}, 2, true},
		{algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: algorithms.MaxLimit, Window: time.Second, Buckets: 4}, 1, true},
	} {
		twice := []algorithms.Check{{Spec: tc.spec, Key: "k"}, {Spec: tc.spec, Key: "k"}}
		for range tc.instants {
			clk.Advance(time.Millisecond)
			if err := s.TakeInto(ctx, dst, twice); err != nil || !dst[1].Allowed {
				t.Fatalf("%s: TakeInto = %v, %+v", tc.spec.Algorithm, err, dst)
			}
		}
		n := testing.AllocsPerRun(50, func() { s.TakeInto(ctx, dst, twice) })
		if (n > 0) != tc.allocs {
			t.Errorf("%s, %d instants: TakeInto naming one held key twice allocates %v times per call; want allocations %v", tc.spec.Algorithm, tc.instants, n, tc.allocs)
		}
	}
}
