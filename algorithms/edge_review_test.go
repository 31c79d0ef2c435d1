package algorithms_test

import (
	"fmt"
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
// epoch, in 1677 and in 2262. Single checks go through TakeOne (Take of
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
		wantModelDecisions(t, fmt.Sprintf("spec %d %v (EdgeTrace(%d, ..., %d))", i, spec, i, steps), tr)
	}
}

// FuzzMemoryStoreEdges decodes the input into an edge trace
// (algotest.EdgeTraceFromBytes: a spec at the bounds, a start in 1677,
// 1969, at the epoch or in 2262, instants on the model's own waits and
// boundaries) and requires MemoryStore to decide every step exactly as the
// model does.
//
//	go test -run '^$' -fuzz FuzzMemoryStoreEdges -fuzztime 60s ./algorithms/
func FuzzMemoryStoreEdges(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 5, 1, 200, 3, 4, 4, 0, 7, 9, 9, 14, 2, 6, 3, 11, 0, 5, 8, 17, 16, 1, 10, 0})
	f.Add([]byte("exactly at RetryAfter, one nanosecond before ResetAfter, then back a window"))
	f.Add([]byte{3, 250, 2, 17, 6, 5, 3, 1, 0, 9, 2, 7, 3, 6, 5, 4, 0, 5, 2, 8, 1, 1, 0, 3, 6, 9, 4, 10, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		wantModelDecisions(t, "EdgeTraceFromBytes", algotest.EdgeTraceFromBytes(data))
	})
}

// TestEdgeTracesSweptAgainstModel replays forward edge traces (no instant
// goes back) on a MemoryStore that drops its idle keys (Sweep) before every
// step, so a key dropped exactly at its ResetAfter, or at a window or
// sub-window boundary, shows when it was not idle yet.
func TestEdgeTracesSweptAgainstModel(t *testing.T) {
	specs := algotest.EdgeSpecs()
	steps := 40
	if testing.Short() {
		steps = 12
	}
	for i, spec := range specs {
		other := specs[(i*5+1)%len(specs)]
		starts := algotest.EdgeStarts(spec.Window)
		tr := algotest.EdgeForwardTrace(uint64(i)+1e6, spec, other, starts[(i+2)%len(starts)], steps)
		clock := algotest.NewClock(tr.Start)
		store := newMemoryStore(t, algorithms.WithClock(clock))
		got := make([][]algorithms.Decision, len(tr.Steps))
		for k, st := range tr.Steps {
			clock.Set(tr.Start.Add(st.At))
			store.Sweep()
			ds, err := store.Take(t.Context(), st.Checks...)
			if err != nil {
				t.Fatalf("spec %d %v step %d: %v", i, spec, k, err)
			}
			got[k] = ds
		}
		if diff := algotest.Diff(tr, got, algotest.ReplayModel(tr)); diff != "" {
			t.Fatalf("spec %d %v, swept before every step:\n%s", i, spec, diff)
		}
	}
}
