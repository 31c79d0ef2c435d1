package algorithms_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestGiveBackNeverAdmitsMore checks the GiveBacker invariant on random
// traces of one key, costs 1 to 3, on windows and rates of no round
// number of ns: after the give-back of one admitted Take X, after every
// Take, with the reckoning exact or early (waited long by up to a fifth of
// a window, as a caller that reads its clock before the Take), the key
// never admits more, at any instant probed up to two windows later, than a
// store that saw the same admitted requests without X. (A sliding_log that
// gave back, for an X that had left the window, the units of the instant
// nearest X's among those left failed it.)
func TestGiveBackNeverAdmitsMore(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	kinds := []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 4, Window: 1_000_000_007},
		{Algorithm: algorithms.SlidingWindow, Limit: 4, Window: 1_000_000_007},
		{Algorithm: algorithms.SlidingLog, Limit: 4, Window: 1_000_000_007},
		{Algorithm: algorithms.SlidingBuckets, Limit: 4, Window: 999_999_999, Buckets: 3},
		{Algorithm: algorithms.TokenBucket, Limit: 3, Window: 1_000_000_007, Burst: 5},
		{Algorithm: algorithms.LeakyBucket, Limit: 3, Window: 1_000_000_007, Burst: 5},
	}
	peek := func(s *algorithms.MemoryStore, c algorithms.Check) int64 {
		var out [1]algorithms.Refunded
		if err := s.GiveBack(t.Context(), out[:], []algorithms.Check{c}, []algorithms.Decision{{}}, 0); err != nil {
			t.Fatal(err)
		}
		return out[0].Remaining
	}
	for _, sp := range kinds {
		fails := 0
		for trial := range 1000 {
			a, ca := newStore(t)
			b, cb := newStore(t)
			type req struct {
				at   time.Duration
				cost int64
				d    algorithms.Decision
			}
			var log []req
			at := time.Duration(rng.Int64N(int64(sp.Window)))
			for range 3 + rng.IntN(8) {
				at += time.Duration(rng.Int64N(int64(sp.Window) / 3))
				c := algorithms.Check{Spec: sp, Key: "k", Cost: 1 + rng.Int64N(3)}
				ca.Set(epoch.Add(at))
				d, err := a.TakeOne(t.Context(), c)
				if err != nil {
					t.Fatal(err)
				}
				if d.Allowed {
					log = append(log, req{at, c.Cost, d})
				}
			}
			if len(log) == 0 {
				continue
			}
			x := rng.IntN(len(log))
			g := at + time.Duration(rng.Int64N(int64(sp.Window))) // after every Take
			waited := g - log[x].at
			if rng.IntN(2) == 0 {
				waited += time.Duration(rng.Int64N(int64(sp.Window) / 5)) // reckoned early
			}
			ca.Set(epoch.Add(g))
			var out [1]algorithms.Refunded
			cx := algorithms.Check{Spec: sp, Key: "k", Cost: log[x].cost}
			if err := a.GiveBack(t.Context(), out[:], []algorithms.Check{cx}, []algorithms.Decision{log[x].d}, waited); err != nil {
				t.Fatal(err)
			}
			ok := true
			for i, r := range log {
				if i == x {
					continue
				}
				cb.Set(epoch.Add(r.at))
				d, err := b.TakeOne(t.Context(), algorithms.Check{Spec: sp, Key: "k", Cost: r.cost})
				if err != nil {
					t.Fatal(err)
				}
				ok = ok && d.Allowed
			}
			if !ok {
				continue // unreachable: fewer units spent admit as much
			}
			c := algorithms.Check{Spec: sp, Key: "k"}
			for u := g; u < g+2*sp.Window+sp.Window/3; u += time.Duration(1 + rng.Int64N(int64(sp.Window)/7)) {
				ca.Set(epoch.Add(u))
				cb.Set(epoch.Add(u))
				if ra, rb := peek(a, c), peek(b, c); ra > rb {
					if fails++; fails <= 3 {
						var trace string
						for i, r := range log {
							trace += fmt.Sprintf(" %d:+%v cost %d;", i, r.at, r.cost)
						}
						t.Errorf("%s trial %d: admitted%s X=%d given back at +%v, waited %v (given %v): at +%v it admits %d, without X %d", sp.Algorithm, trial, trace, x, g, waited, out[0].Given, u, ra, rb)
					}
					break
				}
			}
		}
	}
}
