package algorithms

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestRepeatsAndDupsModesAgree: past pairwiseChecks checks, repeats and
// dups find with maps what they find pair by pair up to it (see
// pairwiseChecks): for random calls of checks on a few keys under a few
// Specs, of random costs and limits, each mode gives every check the same
// error (or none) and the same earlier check on its key, and so the same
// first error of the call.
func TestRepeatsAndDupsModesAgree(t *testing.T) {
	specs := []Spec{
		{Algorithm: FixedWindow, Limit: 5, Window: time.Second},
		{Algorithm: SlidingWindow, Limit: 7, Window: time.Second},
		{Algorithm: TokenBucket, Limit: 3, Window: time.Second, Burst: 6},
		{Algorithm: LeakyQueue, Limit: 4, Window: time.Second, MaxDelay: time.Second},
	}
	tables := make([]*table, len(specs))
	for i := range tables {
		tables[i] = &table{spec: specs[i]}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var errs, found int // errors and earlier checks found, so that both are tried
	for seed := range 2000 {
		n := 1 + rng.IntN(3*pairwiseChecks)
		checks := make([]Check, n)
		ops := make([]pending, n)
		which := make([]int, n)
		for i := range checks {
			s := rng.IntN(len(specs))
			which[i] = s
			checks[i] = Check{Spec: specs[s], Key: fmt.Sprint("k", rng.IntN(3)), Cost: int64(rng.IntN(4))}
			if specs[s].Algorithm.Raisable() && rng.IntN(3) == 0 {
				checks[i].Limit = 1 + int64(rng.IntN(8))
			}
			ops[i] = pending{tb: tables[s], h: uint64(len(checks[i].Key)*31 + int(checks[i].Key[1]))}
		}
		pair, byMap := repeats{}, repeats{ahead: map[specKey]int64{}}
		dpair, dmap := dups{}, dups{last: map[dupKey]int{}}
		for i := range checks {
			if err := checks[i].Validate(); err != nil {
				break // the callers stop at an invalid check
			}
			e1, e2 := pair.check(checks, i), byMap.check(checks, i)
			if fmt.Sprint(e1) != fmt.Sprint(e2) {
				t.Fatalf("seed %d, check %d of %+v: pair by pair %v, by map %v", seed, i, checks, e1, e2)
			}
			if d1, d2 := dpair.find(ops, i), dmap.find(ops, i); d1 != d2 {
				t.Fatalf("seed %d, check %d: the earlier check on its key pair by pair %d, by map %d", seed, i, d1, d2)
			} else if d1 >= 0 {
				found++
			}
			if e1 != nil {
				errs++
				break // the callers stop at the first error
			}
		}
	}
	if errs < 100 || found < 100 {
		t.Fatalf("%d errors and %d earlier checks found: the calls try too few", errs, found)
	}
}
