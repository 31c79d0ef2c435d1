package algorithms_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestSlidingLogTableChurnFollowsModel is TestSlidingLogTableFollowsModel
// with more churn of the logs' table: many sliding_log keys in one shard
// beside keys of other kinds, spilled and folded over and over, while keys
// leave by every road at once — sweeps due at every new key (so that a
// Take's commit sweeps, folds and drops keys between its checks), Sweep,
// Resets of several keys, Resets of every key of a Spec (its table then
// compacted away and made anew), evictions at a key bound — and costs up
// to a limit of MaxLimit in line and spilled; the clock moves in steps of
// 10 ms, which every window is a multiple of, and each Take is followed
// by a Peek at its instant, so that an event exactly a window old (the
// last instant it counts at) is often decided on. Each Decision and
// Refunded must be the Model's, Len the keys the tables hold, and the
// tables' invariants (CheckHeld: every spilled key names a log of its own
// that names it back, the logs dense) must hold after every call.
func TestSlidingLogTableChurnFollowsModel(t *testing.T) {
	big := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: algorithms.MaxLimit, Window: 500 * time.Millisecond}
	specs := []algorithms.Spec{
		{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Second},
		{Algorithm: algorithms.SlidingLog, Limit: 3, Window: 200 * time.Millisecond},
		{Algorithm: algorithms.SlidingLog, Limit: 40, Window: 2 * time.Second},
		big,
		{Algorithm: algorithms.FixedWindow, Limit: 4, Window: time.Second},
		{Algorithm: algorithms.SlidingBuckets, Limit: 6, Window: time.Second, Buckets: 4},
	}
	folds := 0
	for _, cf := range []struct {
		bound, keys int
		seed        uint64
	}{{0, 60, 11}, {0, 700, 12}, {5, 40, 13}, {20, 200, 14}, {300, 900, 15}, {2, 6, 16}} {
		t.Run(fmt.Sprintf("bound=%d/keys=%d", cf.bound, cf.keys), func(t *testing.T) {
			var opts []algorithms.MemoryOption
			if cf.bound > 0 {
				opts = append(opts, algorithms.WithMaxKeys(cf.bound))
			}
			lp := newLogPair(t, opts...)
			s := lp.s
			rng := rand.New(rand.NewPCG(cf.seed, 77))
			keys := algorithms.KeysInShard(s, 0, cf.keys)
			keys = append(keys, "elsewhere-a", "elsewhere-b", "elsewhere-c")
			seen := map[algorithms.Check]bool{}
			cost := func(sp algorithms.Spec) int64 {
				if sp == big {
					switch rng.IntN(4) {
					case 0:
						return algorithms.MaxLimit
					case 1:
						return algorithms.MaxLimit - 1 - int64(rng.IntN(3))
					case 2:
						return int64(1 + rng.IntN(3))
					}
					return 1 + rng.Int64N(algorithms.MaxLimit/3)
				}
				return int64(1 + rng.IntN(2))
			}
			check := func() algorithms.Check {
				sp := specs[rng.IntN(len(specs))]
				// Most checks on a few hot keys, which spill; the rest anywhere.
				k := keys[rng.IntN(len(keys))]
				if rng.IntN(4) > 0 {
					k = keys[rng.IntN(min(8, len(keys)))]
				}
				c := algorithms.Check{Spec: sp, Key: k, Cost: cost(sp)}
				seen[algorithms.Check{Spec: c.Spec, Key: c.Key}] = true
				return c
			}
			spilled, folded := 0, 0
			wasSpilled := map[algorithms.Check]bool{}
			for step := range 3000 {
				if rng.IntN(3) > 0 {
					// Steps of 10 ms, which every window is a multiple of:
					// events exactly a window old, the last instant they
					// count at, are decided on often.
					lp.clk.Advance(time.Duration(rng.IntN(12)) * 10 * time.Millisecond)
				}
				if rng.IntN(3) == 0 {
					algorithms.SweepDue(s)
				}
				var checks []algorithms.Check
				if rng.IntN(10) < 4 {
					checks = []algorithms.Check{check()}
				} else {
					for range 2 + rng.IntN(5) {
						if len(checks) > 0 && rng.IntN(3) == 0 {
							c := checks[rng.IntN(len(checks))]
							c.Cost = cost(c.Spec)
							checks = append(checks, c)
							continue
						}
						checks = append(checks, check())
					}
				}
				got := lp.take(checks...)
				if got != nil {
					// What the Take left, at its instant: an event exactly a
					// window old still counts there.
					lp.peek(checks...)
					switch g := rng.IntN(30); {
					case g < 4 && allowed(got):
						waited := time.Duration(rng.IntN(30)) * time.Millisecond
						lp.clk.Advance(waited)
						lp.giveBack(checks, got, waited)
					case g < 8:
						rs := checks[:1+rng.IntN(len(checks))]
						if err := s.Reset(ctx, rs...); err != nil {
							t.Fatalf("step %d: Reset: %v", step, err)
						}
						if err := lp.m.Reset(rs...); err != nil {
							t.Fatal(err)
						}
						algorithms.CheckHeld(t, s)
					case g < 9 && rng.IntN(4) == 0:
						// Every key of one Spec: its tables left empty, dropped
						// at the shards' next compaction.
						sp := specs[rng.IntN(len(specs))]
						var rs []algorithms.Check
						for _, k := range keys {
							rs = append(rs, algorithms.Check{Spec: sp, Key: k})
						}
						if err := s.Reset(ctx, rs...); err != nil {
							t.Fatal(err)
						}
						if err := lp.m.Reset(rs...); err != nil {
							t.Fatal(err)
						}
						algorithms.CheckHeld(t, s)
					case g < 11:
						s.Sweep()
						algorithms.CheckHeld(t, s)
					}
				}
				for c := range seen {
					if !algorithms.HoldsKey(s, c) {
						lp.forgetDropped(c)
						delete(seen, c)
						delete(wasSpilled, c)
						continue
					}
					if c.Spec.Algorithm != algorithms.SlidingLog {
						continue
					}
					_, sp, _ := algorithms.LogShape(s, c)
					if sp {
						spilled++
					} else if wasSpilled[c] {
						folded++
					}
					wasSpilled[c] = sp
				}
				if got, want := s.Len(), algorithms.CheckHeld(t, s); got != want {
					t.Fatalf("step %d: Len %d, the tables hold %d", step, got, want)
				}
			}
			t.Logf("key-steps spilled %d, folds seen %d", spilled, folded)
			if spilled == 0 {
				t.Fatal("no key was ever spilled")
			}
			folds += folded
		})
	}
	if folds == 0 {
		t.Fatal("no spilled key was ever seen folded back in line")
	}
}
