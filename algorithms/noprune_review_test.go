package algorithms_test

import (
	"fmt"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// noPruneTrace replays algotest.NoPruneTrace on a memory store: with
// instants going back, or (sweep) with the store's sweeps.
func noPruneTrace(t *testing.T, seed uint64, steps int, sweep bool) {
	t.Helper()
	clock := algotest.NewClock(algotest.Base)
	store := newMemoryStore(t, algorithms.WithClock(clock))
	var sweeps func() int
	if sweep {
		sweeps = store.Sweep
	}
	algotest.NoPruneTrace(t, store, clock, seed, steps, sweeps)
}

// TestNoPruneTracesMemory compares random traces of sliding_log and
// sliding_buckets keys, named several times in a call, with the Model,
// with instants going back, and (another run) with sweeps.
func TestNoPruneTracesMemory(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		t.Run(fmt.Sprintf("skew/seed=%d", seed), func(t *testing.T) { noPruneTrace(t, seed, 500, false) })
		t.Run(fmt.Sprintf("sweep/seed=%d", seed), func(t *testing.T) { noPruneTrace(t, seed, 500, true) })
	}
}
