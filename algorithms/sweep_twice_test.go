package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestMemoryStoreSweptKeyNamedTwiceDecidedAtTheSweepsInstant: as
// TestMemoryStoreSweptKeyDecidedAtTheSweepsInstant, with the new key
// named twice in one Take: both checks are decided at the sweep's instant
// (where the dropped key was idle from), every duration of both seen
// from the Take's instant, lag earlier: ResetAfter, NextAfter and, for a
// leaky_queue, the second check's Delay (its place departs 2·W/L after
// the first's, the first's at the sweep's instant).
func TestMemoryStoreSweptKeyNamedTwiceDecidedAtTheSweepsInstant(t *testing.T) {
	const lag = time.Millisecond
	sweepAt := epoch.Add(10 * time.Second)
	// The key is taken sweptIdleAfter before the sweep: it is idle from
	// the sweep's instant on.
	idleAfter := sweptIdleAfter
	for _, k := range algorithms.Kinds {
		spec := kindSpec(k, 5, 5)
		c := algorithms.Check{Spec: spec, Key: "k", Cost: 2}
		t.Run(string(k), func(t *testing.T) {
			ref, refClk := newStore(t)
			refClk.Set(sweepAt)
			want := take(t, ref, c, c)
			for i := range want {
				want[i] = lagged(want[i], lag)
			}
			s := sweptAtNextReading(t, c, sweepAt.Add(-idleAfter[k]), sweepAt, lag)
			got := take(t, s, c, c)
			for i := range got {
				if got[i] != want[i] {
					t.Errorf("check %d of a Take naming the key twice, %v before a sweep that dropped it = %+v, want %+v (a new key's at the sweep, durations %v longer)", i, lag, got[i], want[i], lag)
				}
			}
		})
	}
}
