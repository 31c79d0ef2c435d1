package algorithms_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestRingTableFollowsModel drives a MemoryStore and the Model with the
// same random trace of sliding_buckets keys (three Specs, a fixed_window
// one beside them in the same shards): Takes of one to six checks, often
// on several new keys of one Spec and shard and on one key repeated,
// single checks through TakeOne, Peeks, GiveBacks and Resets, under a key
// bound that evicts on most new keys, or none. Each Decision and Refunded
// must be the Model's; the keys the store evicted or swept are forgotten
// in the Model after each call (the clock never goes back, so a key the
// store drops is as a fresh one to it). After each call the store's rings
// are checked: dense, one per key, each summing to its cell's sum.
func TestRingTableFollowsModel(t *testing.T) {
	specs := []algorithms.Spec{
		{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: time.Second, Buckets: 4},
		{Algorithm: algorithms.SlidingBuckets, Limit: 9, Window: 700 * time.Millisecond, Buckets: 7},
		{Algorithm: algorithms.SlidingBuckets, Limit: 3, Window: 2 * time.Second, Buckets: 1},
		{Algorithm: algorithms.FixedWindow, Limit: 4, Window: time.Second},
	}
	for _, cf := range []struct {
		bound, keys int
		seed        uint64
	}{{0, 40, 1}, {0, 400, 2}, {6, 30, 3}, {12, 40, 4}, {3, 12, 5}, {30, 200, 6}, {0, 1500, 7}, {700, 1500, 8}, {4, 8, 9}, {20, 60, 10}} {
		t.Run(fmt.Sprintf("bound=%d/keys=%d", cf.bound, cf.keys), func(t *testing.T) {
			ctx := context.Background()
			clk := algotest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			opts := []algorithms.MemoryOption{algorithms.WithClock(clk)}
			if cf.bound > 0 {
				opts = append(opts, algorithms.WithMaxKeys(cf.bound))
			}
			s := newMemoryStore(t, opts...)
			m := algotest.NewModel()
			rng := rand.New(rand.NewPCG(cf.seed, 33))
			// Most keys in shard 0, so that new keys of one Take share a
			// shard and its bound; a few elsewhere.
			keys := algorithms.KeysInShard(s, 0, cf.keys)
			keys = append(keys, "elsewhere-a", "elsewhere-b", "elsewhere-c")
			seen := map[algorithms.Check]bool{}
			check := func() algorithms.Check {
				c := algorithms.Check{Spec: specs[rng.IntN(len(specs))], Key: keys[rng.IntN(len(keys))], Cost: int64(1 + rng.IntN(2))}
				seen[algorithms.Check{Spec: c.Spec, Key: c.Key}] = true
				return c
			}
			for step := range 2000 {
				clk.Advance(time.Duration(rng.IntN(120)) * time.Millisecond)
				now := clk.Now()
				var checks []algorithms.Check
				switch g := rng.IntN(10); {
				case g < 3:
					checks = []algorithms.Check{check()}
				default:
					for range 2 + rng.IntN(11) {
						if len(checks) > 0 && rng.IntN(4) == 0 {
							c := checks[rng.IntN(len(checks))] // a key repeated
							checks = append(checks, c)
							continue
						}
						checks = append(checks, check())
					}
				}
				var got []algorithms.Decision
				var err error
				if len(checks) == 1 && rng.IntN(2) == 0 {
					var d algorithms.Decision
					d, err = s.TakeOne(ctx, checks[0])
					got = []algorithms.Decision{d}
				} else {
					got, err = s.Take(ctx, checks...)
				}
				want, werr := m.TakeAt(now, checks...)
				if (err != nil) != (werr != nil) {
					t.Fatalf("step %d: Take(%v): error %v, the Model's %v", step, checks, err, werr)
				}
				if err != nil {
					continue
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("step %d at %v: Take(%v)\n got %+v\nwant %+v", step, now, checks, got, want)
				}
				switch g := rng.IntN(20); {
				case g < 3 && allowed(got):
					waited := time.Duration(rng.IntN(50)) * time.Millisecond
					clk.Advance(waited)
					dst := make([]algorithms.Refunded, len(checks))
					if err := s.GiveBack(ctx, dst, checks, got, waited); err != nil {
						t.Fatalf("step %d: GiveBack: %v", step, err)
					}
					wantR, err := m.GiveBackAt(clk.Now(), checks, got, waited)
					if err != nil {
						t.Fatalf("step %d: the Model's GiveBack: %v", step, err)
					}
					if !reflect.DeepEqual(dst, wantR) {
						t.Fatalf("step %d: GiveBack(%v, %+v, %v)\n got %+v\nwant %+v", step, checks, got, waited, dst, wantR)
					}
				case g < 5:
					dst := make([]algorithms.Decision, len(checks))
					if err := s.Peek(ctx, dst, checks); err != nil {
						t.Fatalf("step %d: Peek: %v", step, err)
					}
					wantP, err := m.PeekAt(clk.Now(), checks...)
					if err != nil {
						t.Fatalf("step %d: the Model's Peek: %v", step, err)
					}
					if !reflect.DeepEqual(dst, wantP) {
						t.Fatalf("step %d: Peek(%v)\n got %+v\nwant %+v", step, checks, dst, wantP)
					}
				case g < 6:
					c := checks[0]
					if err := s.Reset(ctx, c); err != nil {
						t.Fatalf("step %d: Reset: %v", step, err)
					}
					if err := m.Reset(c); err != nil {
						t.Fatal(err)
					}
				}
				for c := range seen {
					if !algorithms.HoldsKey(s, c) {
						if err := m.Reset(c); err != nil {
							t.Fatal(err)
						}
						delete(seen, c)
					}
				}
				algorithms.CheckHeld(t, s)
			}
		})
	}
}

func allowed(ds []algorithms.Decision) bool {
	for _, d := range ds {
		if !d.Allowed {
			return false
		}
	}
	return true
}
