package algotest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// A TraceStore is a store that can peek and give back, as both stores of
// this module can.
type TraceStore interface {
	algorithms.Peeker
	algorithms.GiveBacker
}

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

// NoPruneTrace replays a random trace of steps calls, from seed, on store
// (which reads clock, at Base when called) and on the Model: Takes of up
// to three checks of sliding_log and sliding_buckets keys (the kinds whose
// state changes only when it counts a request), naming one key of one Spec
// several times, Peeks, and GiveBacks of an earlier admitted Take. When
// sweep is nil the instants go back at times, by up to two windows; when
// it is set they never go back, and sweep (the store's Sweep) is called at
// times, at the latest instant so far: a key a sweep drops is decided from
// the sweep's instant on, which the Model does not know. Every decision
// and report must be the Model's; the test fails with the seed and the
// calls made.
func NoPruneTrace(t *testing.T, store TraceStore, clock *Clock, seed uint64, steps int, sweep func() int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	model := NewModel()
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
	for range steps {
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
			if sweep == nil {
				back := 20 * time.Millisecond
				if rng.IntN(2) == 0 {
					back = 3 * time.Millisecond
				}
				at -= time.Duration(rng.Int64N(int64(back)))
			}
		}
		hi = max(hi, at)
		now := Base.Add(at)
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
			checks = FitRepeats(checks)
			got, err := store.Take(ctx, checks...)
			want, merr := model.TakeAt(now, checks...)
			history = append(history, fmt.Sprintf("+%v Take(%v) = %v", at, checks, got))
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
		case op < 9 || sweep == nil:
			if len(taken) == 0 {
				continue
			}
			k := len(taken) - 1 - rng.IntN(min(len(taken), 4))
			waited := time.Duration(rng.Int64N(int64(8 * time.Millisecond)))
			got := make([]algorithms.Refunded, len(taken[k]))
			err := store.GiveBack(ctx, got, taken[k], tds[k], waited)
			want, merr := model.GiveBackAt(now, taken[k], tds[k], waited)
			history = append(history, fmt.Sprintf("+%v GiveBack(%v, %v, waited %v) = %v", at, taken[k], tds[k], waited, got))
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
			clock.Set(Base.Add(hi))
			n := sweep()
			history = append(history, fmt.Sprintf("+%v Sweep() = %d", hi, n))
			at = hi
		}
	}
}
