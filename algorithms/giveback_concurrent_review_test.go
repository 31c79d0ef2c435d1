package algorithms_test

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestMemoryStoreConcurrentGiveBacksRestoreEverything: at one frozen
// instant, eight goroutines each make Takes of one to three checks (every
// kind but the queue, limits up to MaxLimit and windows up to 24 h, costs
// up to 3, a key named twice) and give each one back at once, in any
// interleaving with the others' Takes, Peeks and Sweeps. Nothing refills and
// every Take is given back in full (GiveBacker's rules: the counting kinds
// return exactly to the state without the Take; a bucket gets back what its
// Take's deficit has not refilled, all of it at one instant), so afterwards
// every key is back to its whole allowance: a Peek of it reports Remaining
// at the capacity, ResetAfter and NextAfter 0, and a Take of the whole
// capacity is admitted.
func TestMemoryStoreConcurrentGiveBacksRestoreEverything(t *testing.T) {
	specs := []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 7, Window: time.Second},
		{Algorithm: algorithms.FixedWindow, Limit: algorithms.MaxLimit, Window: algorithms.MaxWindow},
		{Algorithm: algorithms.SlidingWindow, Limit: 6, Window: time.Minute},
		{Algorithm: algorithms.SlidingWindow, Limit: algorithms.MaxLimit - 1, Window: algorithms.MaxWindow - 1},
		{Algorithm: algorithms.SlidingLog, Limit: 8, Window: time.Hour},
		{Algorithm: algorithms.SlidingBuckets, Limit: 9, Window: 24 * time.Hour, Buckets: 24},
		{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Second, Burst: 11},
		{Algorithm: algorithms.TokenBucket, Limit: algorithms.MaxLimit, Window: algorithms.MaxWindow},
		{Algorithm: algorithms.LeakyBucket, Limit: 999_999_937, Window: 999_999_937, Burst: 7},
	}
	for _, bound := range []int{0, 64} {
		t.Run("maxkeys="+strconv.Itoa(bound), func(t *testing.T) {
			clk := newManualClock(epoch.Add(17*time.Hour + 123456789))
			s, _ := newStore(t, algorithms.WithClock(clk), algorithms.WithMaxKeys(bound))
			key := func(r *rand.Rand) string { return "k" + strconv.Itoa(r.IntN(6)) }
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := rand.New(rand.NewPCG(uint64(g), 5))
					for range 1500 {
						k := 1 + r.IntN(3)
						checks := make([]algorithms.Check, k)
						for i := range checks {
							checks[i] = algorithms.Check{Spec: specs[r.IntN(len(specs))], Key: key(r), Cost: 1 + r.Int64N(3)}
						}
						if k > 1 && r.IntN(3) == 0 {
							checks[k-1] = checks[0]
						}
						if algorithms.ValidateChecks(checks) != nil {
							continue
						}
						switch r.IntN(8) {
						case 0:
							if err := s.Peek(ctx, make([]algorithms.Decision, k), checks); err != nil {
								t.Error(err)
								return
							}
							continue
						case 1:
							s.Sweep()
							continue
						}
						ds, err := s.Take(ctx, checks...)
						if err != nil {
							t.Error(err)
							return
						}
						if err := s.GiveBack(ctx, make([]algorithms.Refunded, k), checks, ds, 0); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			for _, spec := range specs {
				for i := range 6 {
					c := algorithms.Check{Spec: spec, Key: "k" + strconv.Itoa(i)}
					var d [1]algorithms.Decision
					if err := s.Peek(ctx, d[:], []algorithms.Check{c}); err != nil {
						t.Fatal(err)
					}
					if d[0].Remaining != spec.Capacity() || d[0].ResetAfter != 0 || d[0].NextAfter != 0 {
						t.Errorf("%v key %s after every Take was given back: %+v, want Remaining %d, ResetAfter and NextAfter 0",
							spec, c.Key, d[0], spec.Capacity())
					}
					c.Cost = spec.Capacity()
					if got := take(t, s, c)[0]; !got.Allowed {
						t.Errorf("%v key %s after every Take was given back: a Take of the whole capacity is denied: %+v", spec, c.Key, got)
					}
				}
			}
		})
	}
}
