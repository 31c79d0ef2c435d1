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
// Take (a quarter of the time at the instant of the last one), with the
// reckoning exact or early (waited long by up to a fifth of a span, as a
// caller that reads its clock before the Take), the key never admits
// more, at any instant probed up to two spans later, than a store that saw
// the same admitted requests without X. A span is the window, or for the
// buckets whose unit is a fraction of a ns the time to refill them. (A
// sliding_log that gave back, for an X that had left the window, the units
// of the instant nearest X's among those left failed it; so did the
// buckets that gave back, for a Take whose ResetAfter rounded its deficit
// up, what the rounding added, when a request came at the give-back's
// instant.)
func TestGiveBackNeverAdmitsMore(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	kinds := []struct {
		algorithms.Spec
		span time.Duration // 0: the window
	}{
		{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 4, Window: 1_000_000_007}},
		{Spec: algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 4, Window: 1_000_000_007}},
		{Spec: algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 4, Window: 1_000_000_007}},
		{Spec: algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 4, Window: 999_999_999, Buckets: 3}},
		{Spec: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 3, Window: 1_000_000_007, Burst: 5}},
		{Spec: algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 3, Window: 1_000_000_007, Burst: 5}},
		// A unit of 3/7 ns and of 1/3 ns: 5 and 6 refill in 3 ns and 2 ns.
		{Spec: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 7_000_000, Window: 3_000_000, Burst: 5}, span: 21},
		{Spec: algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 3_000_000, Window: 1_000_000, Burst: 6}, span: 21},
	}
	peek := func(s *algorithms.MemoryStore, c algorithms.Check) algorithms.Decision {
		var out [1]algorithms.Refunded
		if err := s.GiveBack(t.Context(), out[:], []algorithms.Check{c}, []algorithms.Decision{{}}, 0); err != nil {
			t.Fatal(err)
		}
		return out[0].Decision
	}
	for _, k := range kinds {
		sp, span := k.Spec, k.span
		if span == 0 {
			span = sp.Window
		}
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
			at := time.Duration(rng.Int64N(int64(span)))
			for range 3 + rng.IntN(8) {
				at += time.Duration(rng.Int64N(int64(span) / 3))
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
			g := at // after every Take
			if rng.IntN(4) > 0 {
				g += time.Duration(rng.Int64N(int64(span)))
			}
			waited := g - log[x].at
			early := rng.IntN(2) == 0
			if early {
				waited += time.Duration(rng.Int64N(int64(span) / 5)) // reckoned early
			}
			// The buckets return exactly to the state without X when the
			// reckoning is exact and every request after X came at the
			// give-back's instant, if any did.
			exact := !early && (sp.Algorithm == algorithms.TokenBucket || sp.Algorithm == algorithms.LeakyBucket)
			for _, r := range log[x+1:] {
				exact = exact && r.at == g
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
			// The probes: from g, every instant at which either store's
			// Remaining grows (its NextAfter), so every instant at which
			// one may admit more than the other.
			c := algorithms.Check{Spec: sp, Key: "k"}
			for u := g; u < g+2*span+span/3; {
				ca.Set(epoch.Add(u))
				cb.Set(epoch.Add(u))
				da, db := peek(a, c), peek(b, c)
				if ra, rb := da.Remaining, db.Remaining; ra > rb || (exact && ra != rb) {
					if fails++; fails <= 3 {
						var trace string
						for i, r := range log {
							trace += fmt.Sprintf(" %d:+%v cost %d;", i, r.at, r.cost)
						}
						t.Errorf("%s %v/%v trial %d: admitted%s X=%d given back at +%v, waited %v (given %v): at +%v it admits %d, without X %d", sp.Algorithm, sp.Limit, sp.Window, trial, trace, x, g, waited, out[0].Given, u, ra, rb)
					}
					break
				}
				next := da.NextAfter
				if next == 0 || (db.NextAfter > 0 && db.NextAfter < next) {
					next = db.NextAfter
				}
				if next == 0 {
					break // both full: they admit alike from now on
				}
				u += next
			}
		}
	}
}
