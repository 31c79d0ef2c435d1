package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestGiveBackMatchesMemoryStore replays random traces of Takes and
// GiveBacks on the in-memory store, on Redis and on the reference Model
// (algotest.Model.GiveBackAt) with the same clock, and requires every
// later Decision to match, and what each GiveBack reports of each check
// to be the Model's. The specs are mostly token_bucket and leaky_bucket
// of any size (Limit up to 10^9, Window up to 24 h: the script's wide
// values, and units of a fraction of a ns), the Takes often at the
// instant of the one before or a unit's time apart, the give-backs with
// the caller's wait exact, off by a ns or by up to a unit's time, or
// with a decision not the Take's (its Remaining changed). Even seeds run
// through the function library, odd ones through the script fallback,
// and every fourth on the cluster. Over all seeds the bucket give-backs
// must have given back some units and kept some.
func TestGiveBackMatchesMemoryStore(t *testing.T) {
	var given, kept atomic.Int64
	replayTraces(t, 5151, func(t *testing.T, r *rand.Rand, clk *manualClock, mem *algorithms.MemoryStore, rs *redisstore.Store) {
		model := algotest.NewModel()
		specs := []algorithms.Spec{
			randomSpec(r, algorithms.TokenBucket),
			randomSpec(r, algorithms.LeakyBucket),
			randomSpec(r, algorithms.TokenBucket),
			// A unit of 1/3 ns.
			{Algorithm: algorithms.LeakyBucket, Limit: 3_000_000, Window: time.Millisecond, Burst: 7},
			randomSpec(r, algorithms.Kinds[r.IntN(len(algorithms.Kinds))]),
		}
		keys := []string{"a", "b", "{x}:y"}
		ctx := context.Background()
		type taken struct {
			at     time.Time
			checks []algorithms.Check
			ds     []algorithms.Decision
		}
		var admitted []taken
		var history []string
		for i := range 200 {
			sp := specs[r.IntN(len(specs))]
			unit := int64(sp.Window) / sp.Limit
			switch r.IntN(4) {
			case 0:
				step(r, clk, sp.Window)
			case 1:
				// at the instant of the step before
			default:
				clk.t = clk.t.Add(time.Duration(r.Int64N(unit + 2)))
			}
			if len(admitted) > 0 && r.IntN(3) == 0 {
				// Give back one of the last admitted Takes, each at most once.
				j := len(admitted) - 1 - r.IntN(min(len(admitted), 3))
				tk := admitted[j]
				admitted = append(admitted[:j], admitted[j+1:]...)
				waited := clk.t.Sub(tk.at)
				ds := tk.ds
				switch r.IntN(6) {
				case 0:
					// the caller's clock off by up to a unit's time
					q := tk.checks[r.IntN(len(tk.checks))].Spec
					u := int64(q.Window) / q.Limit
					waited += time.Duration(r.Int64N(u+1) - u/2)
				case 1:
					waited += time.Duration(r.IntN(3) - 1)
				case 2:
					// a decision not the Take's
					ds = slices.Clone(ds)
					k := r.IntN(len(ds))
					ds[k].Remaining = r.Int64N(tk.checks[k].Spec.Capacity()+3) - 1
				}
				waited = max(waited, 0)
				wdst := make([]algorithms.Refunded, len(tk.checks))
				gdst := make([]algorithms.Refunded, len(tk.checks))
				werr := mem.GiveBack(ctx, wdst, tk.checks, ds, waited)
				gerr := rs.GiveBack(ctx, gdst, tk.checks, ds, waited)
				mdst, merr := model.GiveBackAt(clk.t, tk.checks, ds, waited)
				history = append(history, fmt.Sprintf("step %d at %d: give-back of the Take at %d, waited %d: %+v %+v",
					i, clk.t.UnixNano(), tk.at.UnixNano(), waited, tk.checks, ds))
				if werr != nil || gerr != nil || merr != nil {
					t.Fatalf("%s\ngive-back errors: memory %v, redis %v, model %v", join(history), werr, gerr, merr)
				}
				for k := range mdst {
					if wdst[k] != mdst[k] || gdst[k] != mdst[k] {
						t.Fatalf("%s\ngive-back report of check %d (%s):\n\tredis  %+v\n\tmemory %+v\n\tmodel  %+v", join(history), k, tk.checks[k].Spec, gdst[k], wdst[k], mdst[k])
					}
					switch a := tk.checks[k].Spec.Algorithm; {
					case a != algorithms.TokenBucket && a != algorithms.LeakyBucket:
					case mdst[k].Given:
						given.Add(1)
					default:
						kept.Add(1)
					}
				}
				continue
			}
			checks := randomChecks(r, specs, keys, 2)
			want, werr := takeAlike(t, mem, rs, clk, &history, i, checks)
			mds, merr := model.TakeAt(clk.t, checks...)
			if (werr == nil) != (merr == nil) {
				t.Fatalf("%s\nerrors differ: memory %v, model %v", join(history), werr, merr)
			}
			for k := range mds {
				if werr == nil && mds[k] != want[k] {
					t.Fatalf("%s\ncheck %d (%s): memory %+v\n           model %+v", join(history), k, checks[k].Spec, want[k], mds[k])
				}
			}
			if werr == nil && allowed(want) {
				admitted = append(admitted, taken{clk.t, checks, want})
			}
		}
	})
	t.Logf("bucket give-backs: %d gave units back, %d gave none", given.Load(), kept.Load())
	if given.Load() == 0 || kept.Load() == 0 {
		t.Errorf("the bucket give-backs gave back %d times and kept %d times; want some of each", given.Load(), kept.Load())
	}
}
