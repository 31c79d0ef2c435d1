package algorithms_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestDayJumpTracesAgainstModel replays random traces (every kind, limits
// up to MaxLimit, windows up to 24 h, costs above 1, several checks per
// call) on a clock that now and then jumps forward by one to five days and
// later back by as much (a host clock stepped wrong, then corrected), and
// requires every field of every decision to be the model's. A second pass
// replays traces whose instants never go back but leap days ahead, on a
// store swept before every call, so that a key dropped as idle after a
// leap and made again shows if it is not decided as a fresh one.
// dayJumpStart is aligned to no window of the traces.
var dayJumpStart = time.Date(2026, 3, 7, 11, 13, 17, 123456789, time.UTC)

func TestDayJumpTracesAgainstModel(t *testing.T) {
	seeds := 24
	if testing.Short() {
		seeds = 6
	}
	for seed := range uint64(seeds) {
		tr := algotest.RandomTrace(seed+7000, 500)
		tr.Start = dayJumpStart // days of leaps from 2262 would leave int64 nanoseconds
		r := rand.New(rand.NewPCG(seed, 0xda75))
		var jump time.Duration
		for i := range tr.Steps {
			switch r.IntN(40) {
			case 0:
				jump = time.Duration(1+r.IntN(5)) * 24 * time.Hour
			case 1:
				jump = 0
			}
			tr.Steps[i].At += jump
		}
		wantModelDecisions(t, fmt.Sprintf("seed %d, days forward and back", seed), tr)

		fwd := algotest.RandomTrace(seed+8000, 300)
		fwd.Start = dayJumpStart
		var leap time.Duration
		for i := range fwd.Steps {
			if r.IntN(30) == 0 {
				leap += time.Duration(1+r.IntN(5))*24*time.Hour + time.Duration(r.Int64N(int64(time.Hour)))
			}
			fwd.Steps[i].At += leap
		}
		clock := algotest.NewClock(fwd.Start)
		swept := newMemoryStore(t, algorithms.WithClock(clock))
		got := make([][]algorithms.Decision, len(fwd.Steps))
		for k, st := range fwd.Steps {
			clock.Set(fwd.Start.Add(st.At))
			swept.Sweep()
			ds, err := swept.Take(t.Context(), st.Checks...)
			if err != nil {
				t.Fatalf("seed %d step %d: %v", seed, k, err)
			}
			got[k] = ds
		}
		if diff := algotest.Diff(fwd, got, algotest.ReplayModel(fwd)); diff != "" {
			t.Fatalf("seed %d, leaps of days, swept before every call:\n%s", seed, diff)
		}
	}
}
