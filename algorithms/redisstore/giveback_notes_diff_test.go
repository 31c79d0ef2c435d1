package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestGiveBackNotesMatchAcrossResets replays random traces aimed at the
// bucket kinds' note of the latest give-back (GiveBacker.GiveBack): small
// token_bucket and leaky_bucket specs on two keys, the steps mostly at the
// instant of the one before (a Take at a note's instant G is the tie the
// note decides), give-backs of any open Take in any order (several at one
// instant, adding to Γ), the clock sometimes stepping back, and Resets of
// a key under one Spec or all of them between a Take and its give-back
// (the note must go with the key). Every decision and every give-back's
// report must be the same on the memory store, on Redis and on the
// reference Model; the traces must have given units back and kept some.
func TestGiveBackNotesMatchAcrossResets(t *testing.T) {
	var given, kept int
	replayTraces(t, 7171, func(t *testing.T, r *rand.Rand, clk *manualClock, mem *algorithms.MemoryStore, rs *redisstore.Store) {
		model := algotest.NewModel()
		ctx := context.Background()
		specs := []algorithms.Spec{
			{Algorithm: algorithms.TokenBucket, Limit: 3, Window: time.Minute, Burst: 4},
			{Algorithm: algorithms.LeakyBucket, Limit: 2, Window: time.Minute, Burst: 4},
			{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Minute, Burst: 7},
		}
		keys := []string{"a", "b"}
		type taken struct {
			at     time.Time
			checks []algorithms.Check
			ds     []algorithms.Decision
		}
		var open []taken
		var history []string
		quantum := 5 * time.Second
		for i := range 120 {
			switch r.IntN(8) {
			case 0, 1, 2, 3: // the instant of the step before
			case 4:
				clk.t = clk.t.Add(-quantum * time.Duration(1+r.IntN(3))) // a clock behind
			default:
				clk.t = clk.t.Add(quantum * time.Duration(1+r.IntN(4)))
			}
			switch a := r.IntN(10); {
			case a == 0:
				// Reset a key under one Spec, or under all of them.
				k := keys[r.IntN(len(keys))]
				var cs []algorithms.Check
				if r.IntN(2) == 0 {
					cs = []algorithms.Check{{Spec: specs[r.IntN(len(specs))], Key: k}}
				} else {
					for _, sp := range specs {
						cs = append(cs, algorithms.Check{Spec: sp, Key: k})
					}
				}
				history = append(history, fmt.Sprintf("step %d at %d: reset %+v", i, clk.t.UnixNano(), cs))
				if err := mem.Reset(ctx, cs...); err != nil {
					t.Fatal(err)
				}
				if err := rs.Reset(ctx, cs...); err != nil {
					t.Fatal(err)
				}
				if err := model.Reset(cs...); err != nil {
					t.Fatal(err)
				}
			case a <= 4 && len(open) > 0:
				j := r.IntN(len(open))
				tk := open[j]
				open = append(open[:j], open[j+1:]...)
				waited := clk.t.Sub(tk.at)
				if waited < 0 {
					open = append(open, tk) // its Take is ahead of the clock: later
					continue
				}
				wdst := make([]algorithms.Refunded, len(tk.checks))
				gdst := make([]algorithms.Refunded, len(tk.checks))
				werr := mem.GiveBack(ctx, wdst, tk.checks, tk.ds, waited)
				gerr := rs.GiveBack(ctx, gdst, tk.checks, tk.ds, waited)
				mdst, merr := model.GiveBackAt(clk.t, tk.checks, tk.ds, waited)
				history = append(history, fmt.Sprintf("step %d at %d: give-back of the Take at %d, waited %d: %+v %+v",
					i, clk.t.UnixNano(), tk.at.UnixNano(), waited, tk.checks, tk.ds))
				if werr != nil || gerr != nil || merr != nil {
					t.Fatalf("%s\ngive-back errors: memory %v, redis %v, model %v", join(history), werr, gerr, merr)
				}
				for k := range mdst {
					if wdst[k] != mdst[k] || gdst[k] != mdst[k] {
						t.Fatalf("%s\ngive-back report of check %d (%s):\n\tredis  %+v\n\tmemory %+v\n\tmodel  %+v", join(history), k, tk.checks[k].Spec, gdst[k], wdst[k], mdst[k])
					}
					if mdst[k].Given {
						given++
					} else {
						kept++
					}
				}
			default:
				checks := randomChecks(r, specs, keys, 2)
				for k := range checks {
					checks[k].Cost = 1 + r.Int64N(2)
				}
				checks = algotest.FitRepeats(checks)
				want, werr := takeAlike(t, mem, rs, clk, &history, i, checks)
				mds, merr := model.TakeAt(clk.t, checks...)
				if (werr == nil) != (merr == nil) {
					t.Fatalf("%s\nerrors differ: memory %v, model %v", join(history), werr, merr)
				}
				if werr != nil {
					continue
				}
				for k := range mds {
					if mds[k] != want[k] {
						t.Fatalf("%s\ncheck %d (%s): memory %+v\n           model %+v", join(history), k, checks[k].Spec, want[k], mds[k])
					}
				}
				if allowed(want) {
					open = append(open, taken{clk.t, checks, want})
				}
			}
		}
	})
	t.Logf("give-backs: %d checks given units back, %d not", given, kept)
	if given == 0 || kept == 0 {
		t.Errorf("the give-backs gave back %d times and kept %d times; want some of each", given, kept)
	}
}
