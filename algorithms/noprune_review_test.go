package algorithms_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// noPruneSpecs are the kinds whose state changes only when it counts a
// request: small limits and few sub-windows, so that a trace of a few
// hundred calls reaches full windows, stale events and stale buckets.
func noPruneSpecs() []algorithms.Spec {
	w := 10 * time.Millisecond
	return []algorithms.Spec{
		{Algorithm: algorithms.SlidingLog, Limit: 4, Window: w},
		{Algorithm: algorithms.SlidingLog, Limit: 7, Window: 3 * w},
		{Algorithm: algorithms.SlidingBuckets, Limit: 4, Window: w, Buckets: 2},
		{Algorithm: algorithms.SlidingBuckets, Limit: 6, Window: w, Buckets: 5},
	}
}

// noPruneTrace replays a random trace on a memory store and on the Model:
// Takes of up to three checks naming one key of one Spec several times,
// Peeks, GiveBacks of an earlier admitted Take, instants going back by up
// to two windows (when skew) and Sweeps (when sweep: the instants then
// never go back, for a key a sweep drops is decided from the sweep's
// instant on, which the Model does not know). Every decision and report
// must be the Model's.
func noPruneTrace(t *testing.T, seed uint64, steps int, skew, sweep bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	clock := algotest.NewClock(algotest.Base)
	store := newMemoryStore(t, algorithms.WithClock(clock))
	model := algotest.NewModel()
	// Two Specs and at most two keys a trace, and short steps: the keys
	// fill their windows, so that denied calls are frequent.
	all := noPruneSpecs()
	specs := []algorithms.Spec{all[rng.IntN(2)], all[2+rng.IntN(2)]}
	keys := []string{"a", "b"}[:1+rng.IntN(2)]
	ctx := t.Context()
	var (
		at      time.Duration // relative to Base
		hi      time.Duration
		history []string
		taken   [][]algorithms.Check
		tds     [][]algorithms.Decision
	)
	check := func() algorithms.Check {
		return algorithms.Check{Spec: specs[rng.IntN(len(specs))], Key: keys[rng.IntN(len(keys))], Cost: int64(1 + rng.IntN(3))}
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d: %s\nhistory:\n%s", seed, fmt.Sprintf(format, args...), strings.Join(history, "\n"))
	}
	for step := 0; step < steps; step++ {
		// The next instant: mostly forward by up to a window, at times a
		// sub-window boundary exactly, at times back.
		switch r := rng.IntN(10); {
		case r < 6:
			at += time.Duration(rng.Int64N(int64(2 * time.Millisecond)))
		case r < 7:
			at = (at/(2*time.Millisecond) + 1) * 2 * time.Millisecond
		case r < 8:
			at += time.Duration(rng.Int64N(int64(25 * time.Millisecond)))
		default:
			if skew {
				back := 20 * time.Millisecond
				if rng.IntN(2) == 0 {
					back = 3 * time.Millisecond
				}
				at -= time.Duration(rng.Int64N(int64(back)))
			}
		}
		hi = max(hi, at)
		now := algotest.Base.Add(at)
		clock.Set(now)
		switch op := rng.IntN(10); {
		case op < 6:
			checks := []algorithms.Check{check()}
			for range rng.IntN(3) {
				if rng.IntN(3) > 0 {
					c := checks[rng.IntN(len(checks))]
					c.Cost = int64(1 + rng.IntN(2))
					checks = append(checks, c) // the same key again
				} else {
					checks = append(checks, check())
				}
			}
			checks = algotest.FitRepeats(checks)
			got, err := store.Take(ctx, checks...)
			want, merr := model.TakeAt(now, checks...)
			history = append(history, fmt.Sprintf("+%v Take(%v)", at, checks))
			if (err == nil) != (merr == nil) {
				fail("Take: error %v, model %v", err, merr)
			}
			if err != nil {
				continue
			}
			for i := range got {
				if got[i] != want[i] {
					fail("Take check %d at +%v:\n\tgot  %+v\n\twant %+v", i, at, got[i], want[i])
				}
			}
			taken, tds = append(taken, checks), append(tds, got)
		case op < 8:
			checks := []algorithms.Check{check()}
			if rng.IntN(2) == 0 {
				checks = append(checks, checks[0])
			}
			got := make([]algorithms.Decision, len(checks))
			err := store.Peek(ctx, got, checks)
			want, merr := model.PeekAt(now, checks...)
			history = append(history, fmt.Sprintf("+%v Peek(%v)", at, checks))
			if (err == nil) != (merr == nil) {
				fail("Peek: error %v, model %v", err, merr)
			}
			for i := range got {
				if err == nil && got[i] != want[i] {
					fail("Peek check %d at +%v:\n\tgot  %+v\n\twant %+v", i, at, got[i], want[i])
				}
			}
		case op < 9 || !sweep:
			if len(taken) == 0 {
				continue
			}
			k := len(taken) - 1 - rng.IntN(min(len(taken), 4))
			waited := time.Duration(rng.Int64N(int64(8 * time.Millisecond)))
			got := make([]algorithms.Refunded, len(taken[k]))
			err := store.GiveBack(ctx, got, taken[k], tds[k], waited)
			want, merr := model.GiveBackAt(now, taken[k], tds[k], waited)
			history = append(history, fmt.Sprintf("+%v GiveBack(%v, %v, waited %v)", at, taken[k], tds[k], waited))
			if (err == nil) != (merr == nil) {
				fail("GiveBack: error %v, model %v", err, merr)
			}
			for i := range got {
				if err == nil && got[i] != want[i] {
					fail("GiveBack check %d at +%v:\n\tgot  %+v\n\twant %+v", i, at, got[i], want[i])
				}
			}
		default:
			// A sweep at the latest instant so far: it must drop only
			// keys that no later call (none is earlier) still counts.
			clock.Set(algotest.Base.Add(hi))
			n := store.Sweep()
			history = append(history, fmt.Sprintf("+%v Sweep() = %d", hi, n))
			at = hi
		}
	}
}

// TestNoPruneTracesMemory compares random traces of sliding_log and
// sliding_buckets keys, named several times in a call, with the Model,
// with instants going back, and (another run) with sweeps.
func TestNoPruneTracesMemory(t *testing.T) {
	for seed := uint64(1); seed <= 60; seed++ {
		t.Run(fmt.Sprintf("skew/seed=%d", seed), func(t *testing.T) { noPruneTrace(t, seed, 500, true, false) })
		t.Run(fmt.Sprintf("sweep/seed=%d", seed), func(t *testing.T) { noPruneTrace(t, seed, 500, false, true) })
	}
}
