package algorithms_test

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// wideSpecs are one Spec of each kind at the largest limits and windows
// (a window of a day, a limit of MaxLimit, 3600 buckets), and a
// sliding_window whose limit and window have no common factor.
var wideSpecs = []algorithms.Spec{
	{Algorithm: algorithms.FixedWindow, Limit: algorithms.MaxLimit, Window: algorithms.MaxWindow},
	{Algorithm: algorithms.SlidingWindow, Limit: algorithms.MaxLimit, Window: algorithms.MaxWindow},
	{Algorithm: algorithms.SlidingLog, Limit: algorithms.MaxLimit, Window: algorithms.MaxWindow},
	{Algorithm: algorithms.SlidingBuckets, Limit: algorithms.MaxLimit, Window: algorithms.MaxWindow, Buckets: algorithms.MaxBuckets},
	{Algorithm: algorithms.TokenBucket, Limit: algorithms.MaxLimit, Window: algorithms.MaxWindow},
	{Algorithm: algorithms.LeakyBucket, Limit: algorithms.MaxLimit - 1, Window: algorithms.MaxWindow, Burst: algorithms.MaxLimit - 2},
	{Algorithm: algorithms.LeakyQueue, Limit: 3, Window: algorithms.MaxWindow, MaxDelay: algorithms.MaxWindow},
	{Algorithm: algorithms.SlidingWindow, Limit: 999_999_937, Window: algorithms.MaxWindow - 1},
}

// TestMemoryStoreWideTakesFollowModel: Takes of 1 to 16 checks (past the
// 8 a Take decides without allocating), most naming a key and Spec again,
// on three keys under the Specs of every kind at the largest limits and
// windows, with costs up to the capacity, the clock going forward by up
// to 30 hours and back by up to three days, decide as the Model does, one
// denied check consuming nothing of the others (sliding_log events and
// sliding_buckets rings included); a Peek before some Takes changes
// nothing of what they decide. The random traces of the conformance suite
// take at most three checks at a time.
func TestMemoryStoreWideTakesFollowModel(t *testing.T) {
	keys := []string{"a", "b", "c"}
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 9))
		clock := algotest.NewClock(algotest.Base)
		s, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		m := algotest.NewModel()
		at := algotest.Base
		for step := range 60 {
			switch r.IntN(5) {
			case 0:
			case 1:
				at = at.Add(-time.Duration(r.Int64N(int64(72 * time.Hour))))
			default:
				at = at.Add(time.Duration(r.Int64N(int64(30 * time.Hour))))
			}
			checks := make([]algorithms.Check, 1+r.IntN(16))
			for i := range checks {
				sp := wideSpecs[r.IntN(len(wideSpecs))]
				c := algorithms.Check{Spec: sp, Key: keys[r.IntN(len(keys))], Cost: 1 + r.Int64N(3)}
				switch r.IntN(4) {
				case 0:
					c.Cost = sp.Capacity() - r.Int64N(2)
				case 1:
					c.Cost = 1 + r.Int64N(sp.Capacity())
				}
				checks[i] = c
			}
			checks = algotest.FitRepeats(checks)
			clock.Set(at)
			if r.IntN(3) == 0 {
				if err := s.Peek(ctx, make([]algorithms.Decision, len(checks)), checks); err != nil {
					t.Fatal(err)
				}
			}
			got := make([]algorithms.Decision, len(checks))
			err := s.TakeInto(ctx, got, checks)
			want, werr := m.TakeAt(at, checks...)
			if err != nil || werr != nil {
				t.Fatalf("seed %d step %d: TakeInto: %v, Model: %v", seed, step, err, werr)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("seed %d step %d at %v, check %d of %d (%s %q cost %d): store %+v, Model %+v",
						seed, step, at, i, len(checks), checks[i].Spec, checks[i].Key, checks[i].Cost, got[i], want[i])
				}
			}
		}
	}
}

// TestMemoryStoreConcurrentWideTakesAccountExactly: 32 goroutines make
// TakeOnes and Takes of up to 12 checks (past 8: the allocating path;
// keys and Specs named again) on three keys under a Spec of every kind,
// at one instant, while Sweeps run (finding nothing idle). What the
// admitted Takes cost adds up, for every key and Spec, to at most its
// capacity, and a Peek afterwards finds exactly that much taken: no
// denied Take consumed, no admitted one was lost, none over-admitted.
// (leaky_queue costs 1 each: a queue admits a request of any cost while
// the places ahead of it wait short enough.)
func TestMemoryStoreConcurrentWideTakesAccountExactly(t *testing.T) {
	specs := []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 50, Window: time.Second},
		{Algorithm: algorithms.SlidingWindow, Limit: 50, Window: time.Second},
		{Algorithm: algorithms.SlidingLog, Limit: 50, Window: time.Second},
		{Algorithm: algorithms.SlidingBuckets, Limit: 50, Window: time.Second, Buckets: 4},
		{Algorithm: algorithms.TokenBucket, Limit: 50, Window: time.Second, Burst: 60},
		{Algorithm: algorithms.LeakyBucket, Limit: 50, Window: time.Second},
		{Algorithm: algorithms.LeakyQueue, Limit: 50, Window: time.Second, MaxDelay: time.Second},
	}
	keys := []string{"a", "b", "c"}
	type specKey struct {
		s algorithms.Spec
		k string
	}
	for round := range 3 {
		s, _ := newStore(t)
		var (
			mu       sync.Mutex
			admitted = map[specKey]int64{}
			wg       sync.WaitGroup
		)
		for g := range 32 {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(round), uint64(g)))
				for range 300 {
					if r.IntN(50) == 0 {
						s.Sweep()
					}
					checks := make([]algorithms.Check, 1)
					if r.IntN(2) == 0 {
						checks = make([]algorithms.Check, 1+r.IntN(12))
					}
					for i := range checks {
						c := algorithms.Check{Spec: specs[r.IntN(len(specs))], Key: keys[r.IntN(len(keys))], Cost: 1 + r.Int64N(3)}
						if c.Spec.Algorithm == algorithms.LeakyQueue {
							c.Cost = 1
						}
						checks[i] = c
					}
					checks = algotest.FitRepeats(checks)
					var ds []algorithms.Decision
					var err error
					if len(checks) == 1 && r.IntN(2) == 0 {
						var d algorithms.Decision
						d, err = s.TakeOne(ctx, checks[0])
						ds = []algorithms.Decision{d}
					} else {
						ds, err = s.Take(ctx, checks...)
					}
					if err != nil {
						t.Error(err)
						return
					}
					all := true
					for _, d := range ds {
						all = all && d.Allowed
					}
					if all {
						mu.Lock()
						for _, c := range checks {
							admitted[specKey{c.Spec, c.Key}] += c.Cost
						}
						mu.Unlock()
					}
				}
			})
		}
		wg.Wait()
		for _, sp := range specs {
			for _, k := range keys {
				n := admitted[specKey{sp, k}]
				if n > sp.Capacity() {
					t.Errorf("round %d, %s key %s: admitted %d, above the capacity %d", round, sp, k, n, sp.Capacity())
				}
				d := make([]algorithms.Decision, 1)
				if err := s.Peek(ctx, d, []algorithms.Check{{Spec: sp, Key: k}}); err != nil {
					t.Fatal(err)
				}
				if want := max(sp.Capacity()-n, 0); d[0].Remaining != want {
					t.Errorf("round %d, %s key %s: %d admitted, Peek finds %d left, want %d", round, sp, k, n, d[0].Remaining, want)
				}
			}
		}
	}
}
