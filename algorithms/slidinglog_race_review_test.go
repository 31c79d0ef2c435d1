package algorithms_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestSlidingLogConcurrentChurn runs goroutines that take (TakeOne, and
// Takes of several checks with keys repeated and a gate that denies some of
// them whole), give back at once, peek, reset and sweep sliding_log keys of
// two Specs, all in one shard, in phases: the clock is frozen for a phase
// and moves on between phases, so that every call of a phase is decided at
// its instant. Half the keys are watched: never reset, they keep their
// logs, which the other keys' resets, the sweeps and the folds move about
// the logs' table. At the end of each phase, for every watched key, the
// units the store admitted and did not give back within the window at
// the phase's instant, as the goroutines counted them, must be at most
// Limit and be exactly what a Peek finds in use; and the store's tables
// must pass CheckHeld. Run it with -race.
func TestSlidingLogConcurrentChurn(t *testing.T) {
	specs := []algorithms.Spec{
		{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Second},
		{Algorithm: algorithms.SlidingLog, Limit: 3, Window: 300 * time.Millisecond},
	}
	gate := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 3, Window: 50 * time.Millisecond}
	clk := algotest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newMemoryStore(t, algorithms.WithClock(clk))
	const (
		goroutines = 8
		phases     = 120
		perPhase   = 30
		nWatched   = 24
	)
	keys := algorithms.KeysInShard(s, 0, 2*nWatched)
	watched := map[string]int{}
	for i, k := range keys[:nWatched] {
		watched[k] = i
	}
	// net[p][s][k]: the units of Spec s that watched key k was admitted at
	// phase p and did not give back.
	net := make([][2][nWatched]atomic.Int64, phases)
	instants := make([]time.Time, phases)
	count := func(p int, c algorithms.Check, sign int64) {
		if k, ok := watched[c.Key]; ok {
			net[p][slices.Index(specs, c.Spec)][k].Add(sign * c.Cost)
		}
	}
	var calls, admitted, given atomic.Int64
	steps := rand.New(rand.NewPCG(1, 2))
	for p := range phases {
		instants[p] = clk.Now()
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(p), uint64(g)))
				// Keys from a few hot ones, so that one Take names one
				// key twice now and then.
				hot := keys[rng.IntN(len(keys)-6):][:6]
				check := func() algorithms.Check {
					return algorithms.Check{Spec: specs[rng.IntN(len(specs))], Key: hot[rng.IntN(len(hot))], Cost: int64(1 + rng.IntN(2))}
				}
				for range perPhase {
					calls.Add(1)
					switch op := rng.IntN(16); {
					case op < 6:
						c := check()
						d, err := s.TakeOne(ctx, c)
						if err != nil {
							t.Error(err)
							return
						}
						if !d.Allowed {
							continue
						}
						admitted.Add(1)
						count(p, c, 1)
						if rng.IntN(4) == 0 {
							var r [1]algorithms.Refunded
							if err := s.GiveBack(ctx, r[:], []algorithms.Check{c}, []algorithms.Decision{d}, 0); err != nil {
								t.Error(err)
								return
							}
							if r[0].Given {
								given.Add(1)
								count(p, c, -1)
							}
						}
					case op < 11:
						checks := []algorithms.Check{check()}
						for range 1 + rng.IntN(3) {
							checks = append(checks, check())
						}
						if rng.IntN(3) == 0 {
							checks = append(checks, algorithms.Check{Spec: gate, Key: fmt.Sprint("gate", g)})
						}
						for algorithms.ValidateChecks(checks) != nil {
							checks = checks[:len(checks)-1]
						}
						ds, err := s.Take(ctx, checks...)
						if err != nil {
							t.Error(err)
							return
						}
						if !allowed(ds) {
							continue
						}
						admitted.Add(1)
						for _, c := range checks {
							if c.Spec != gate {
								count(p, c, 1)
							}
						}
						if rng.IntN(3) == 0 {
							r := make([]algorithms.Refunded, len(checks))
							if err := s.GiveBack(ctx, r, checks, ds, 0); err != nil {
								t.Error(err)
								return
							}
							for i, c := range checks {
								if r[i].Given && c.Spec != gate {
									given.Add(1)
									count(p, c, -1)
								}
							}
						}
					case op < 13:
						checks := []algorithms.Check{check(), check()}
						for algorithms.ValidateChecks(checks) != nil {
							checks = checks[:len(checks)-1]
						}
						dst := make([]algorithms.Decision, len(checks))
						if err := s.Peek(ctx, dst, checks); err != nil {
							t.Error(err)
							return
						}
					case op < 15:
						// Reset keys that are not watched: their logs go, and
						// the last log moves into each one's place.
						var rs []algorithms.Check
						for range 1 + rng.IntN(3) {
							rs = append(rs, algorithms.Check{Spec: specs[rng.IntN(len(specs))], Key: keys[nWatched+rng.IntN(nWatched)]})
						}
						if err := s.Reset(ctx, rs...); err != nil {
							t.Error(err)
							return
						}
					default:
						s.Sweep()
					}
				}
			}()
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		algorithms.CheckHeld(t, s)
		now := clk.Now()
		for si, sp := range specs {
			for k := range nWatched {
				var used int64
				for q := p; q >= 0 && !instants[q].Before(now.Add(-sp.Window)); q-- {
					used += net[q][si][k].Load()
				}
				if used > sp.Limit {
					t.Fatalf("phase %d: key %q admitted %d units of %v within a window, limit %d", p, keys[k], used, sp, sp.Limit)
				}
				var d [1]algorithms.Decision
				if err := s.Peek(ctx, d[:], []algorithms.Check{{Spec: sp, Key: keys[k]}}); err != nil {
					t.Fatal(err)
				}
				if got := sp.Limit - d[0].Remaining; got != used {
					t.Fatalf("phase %d: key %q under %v: the store has %d units in use, the goroutines counted %d admitted and not given back", p, keys[k], sp, got, used)
				}
			}
		}
		clk.Advance(time.Duration(steps.IntN(120)) * time.Millisecond)
	}
	t.Logf("%d calls, %d admitted, %d checks given back", calls.Load(), admitted.Load(), given.Load())
}
