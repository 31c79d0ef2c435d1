package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestMemoryStoreTakeIntoRepeatedKeyAllocations pins the exception that
// TakeInto's documentation makes to its promise of no allocation on held
// keys: a key of a fixed-size kind named twice in one Take costs nothing,
// and so does a sliding_log key holding one logged instant, the Take's
// (its one event, in line, is copied by value), while a sliding_log key
// holding two or more, or a sliding_buckets key, named twice has its state
// copied for the second check, which allocates (as does a sliding_log key
// of one instant before the Take's:
// TestMemoryStoreTakeIntoRepeatedLogKeyOfOneEarlierInstant).
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

// TestMemoryStoreTakeIntoRepeatedLogKeyOfOneEarlierInstant pins the other
// side of TakeInto's exception for a sliding_log key named twice: a key
// holding in its slot one event, logged at an instant before the Take's,
// is copied for the second check (its event and the first check's, two
// instants, make a log), which allocates, as TakeInto's documentation
// says. (The Take is one that a third check denies, so that the key keeps
// its one instant from one call to the next.) The documentation said only
// a key of two or more logged instants was copied.
func TestMemoryStoreTakeIntoRepeatedLogKeyOfOneEarlierInstant(t *testing.T) {
	s, clk := newStore(t)
	spec := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 100, Window: time.Hour}
	full := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: "full"}
	take(t, s, full)
	take(t, s, algorithms.Check{Spec: spec, Key: "k"})
	clk.Advance(time.Millisecond)
	checks := []algorithms.Check{{Spec: spec, Key: "k"}, {Spec: spec, Key: "k"}, full}
	dst := make([]algorithms.Decision, len(checks))
	n := testing.AllocsPerRun(50, func() {
		if err := s.TakeInto(ctx, dst, checks); err != nil || !dst[1].Allowed || dst[2].Allowed {
			t.Fatalf("TakeInto = %v, %+v; want the log's checks allowed, the third denied", err, dst)
		}
	})
	if n == 0 {
		t.Errorf("TakeInto naming twice a held sliding_log key of one logged instant, at a later one, does not allocate; TakeInto's documentation says it does (its state is copied), and TestMemoryStoreTakeIntoRepeatedKeyAllocations pins that a key of two instants does")
	}
}
