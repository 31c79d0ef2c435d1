package algorithms_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestEdgeTracesAgainstModel replays, for every spec of algotest.EdgeSpecs
// (limits up to MaxLimit, windows of 1 ms to 24 h that divide neither a
// second nor a day, Buckets up to 3600, the largest Burst and MaxDelay the
// bounds allow), a trace whose instants land exactly on and one nanosecond
// before the model's RetryAfter, ResetAfter, NextAfter and Delay, on window
// and sub-window boundaries, and go back; from starts before 1970, at the
// epoch, in 1700 and in 2262. Single checks go through TakeOne (Take of
// one check), the others through the batch path; every field of every
// decision must match the model.
func TestEdgeTracesAgainstModel(t *testing.T) {
	specs := algotest.EdgeSpecs()
	steps := 40
	if testing.Short() {
		steps = 12
	}
	for i, spec := range specs {
		other := specs[(i*7+3)%len(specs)]
		starts := algotest.EdgeStarts(spec.Window)
		start := starts[i%len(starts)]
		tr := algotest.EdgeTrace(uint64(i), spec, other, start, steps)
		clock := algotest.NewClock(tr.Start)
		store := newMemoryStore(t, algorithms.WithClock(clock))
		diff, err := algotest.CompareModel(t.Context(), store, clock, tr)
		if err != nil {
			t.Fatalf("spec %d %v: %v", i, spec, err)
		}
		if diff != "" {
			t.Fatalf("spec %d %v (EdgeTrace(%d, ..., %d)):\n%s", i, spec, i, steps, diff)
		}
	}
}
