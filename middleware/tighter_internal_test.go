package middleware

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestTighterAdmitsNoMore: a Spec tighter reports as tightening the one
// it replaces admits nothing that one denies: over random traces of
// requests, each request the new Spec admits (counted under both, as a
// reload's guard counts it) the replaced Spec admits too, on the same
// history. A Spec that admits in some respect more (a fixed_window in
// place of sliding_buckets of one window, buckets not dividing the
// replaced ones) is not tighter: a reload to it starts afresh
// (SetPolicies), not held to the Spec it replaced.
func TestTighterAdmitsNoMore(t *testing.T) {
	fw := func(l int64, w time.Duration) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: l, Window: w}
	}
	sb := func(l int64, w time.Duration, b int) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: l, Window: w, Buckets: b}
	}
	sw := func(l int64, w time.Duration) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: l, Window: w}
	}
	sl := func(l int64, w time.Duration) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: l, Window: w}
	}
	tb := func(k algorithms.Kind, l int64, w time.Duration, b int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: k, Limit: l, Window: w, Burst: b}
	}
	s := time.Second
	specs := []algorithms.Spec{
		fw(10, 60*s), fw(5, 60*s), fw(10, 90*s), fw(10, 120*s), fw(10, time.Hour),
		sb(10, 60*s, 2), sb(10, 60*s, 3), sb(10, 60*s, 6), sb(10, 120*s, 2), sb(10, 120*s, 4), sb(10, 90*s, 3), sb(6, 60*s, 2),
		sw(10, 60*s), sw(10, 90*s), sw(10, 120*s), sw(5, 60*s),
		sl(10, 60*s), sl(10, 90*s), sl(5, 60*s),
		tb(algorithms.TokenBucket, 20, 60*s, 0), tb(algorithms.TokenBucket, 20, 60*s, 10), tb(algorithms.LeakyBucket, 20, 60*s, 0),
		tb(algorithms.TokenBucket, 10, 60*s, 20), tb(algorithms.LeakyBucket, 10, 30*s, 10), tb(algorithms.TokenBucket, 10, 120*s, 0),
		{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: 20 * s, MaxDelay: 5 * s},
		{Algorithm: algorithms.LeakyQueue, Limit: 5, Window: 20 * s, MaxDelay: 5 * s},
		{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: 40 * s, MaxDelay: 5 * s},
	}
	for _, tc := range []struct {
		from, to algorithms.Spec
		want     bool
	}{
		{fw(10, 60*s), fw(10, time.Hour), true},
		{fw(10, 60*s), fw(10, 90*s), false},
		{fw(10, 60*s), sb(10, 60*s, 2), true},
		{sb(10, 60*s, 2), sb(10, 60*s, 6), true},
		{sb(10, 60*s, 6), sb(10, 60*s, 2), false},
		{sb(10, 60*s, 2), sb(10, 60*s, 3), false},
		{sb(10, 60*s, 6), fw(10, 60*s), false},
		{sb(10, 60*s, 6), fw(10, 120*s), false}, // 10 at 1m50s and 10 at 2m10s
		{sw(10, 60*s), sw(10, 120*s), true},
		{sw(10, 60*s), sw(10, 90*s), false},
		{sl(10, 60*s), sl(10, 90*s), true},
		{sb(10, 60*s, 2), sb(10, 120*s, 4), true},
	} {
		if got := tighter(tc.from, tc.to); got != tc.want {
			t.Errorf("tighter(%v, %v) = %v, want %v", tc.from, tc.to, got, tc.want)
		}
	}
	gaps := []time.Duration{0, 0, 0, 100 * time.Millisecond, s, 7 * s, 13 * s, 29 * s, 30 * s, 31 * s, 59 * s, 61 * s, 89 * s}
	t0 := time.Unix(3600*24*1000, 0)
	for _, from := range specs {
		for _, to := range specs {
			if !tighter(from, to) {
				continue
			}
			t.Run(fmt.Sprintf("%v to %v", from, to), func(t *testing.T) {
				for seed := range uint64(40) {
					clock := algotest.NewClock(t0)
					store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
					if err != nil {
						t.Fatal(err)
					}
					rng := rand.New(rand.NewPCG(seed, 7))
					var trace []time.Duration
					for range 200 {
						trace = append(trace, clock.Now().Sub(t0))
						dt, err := store.Take(context.Background(), algorithms.Check{Spec: to, Key: "k", Cost: 1})
						if err != nil {
							t.Fatal(err)
						}
						if dt[0].Allowed {
							df, err := store.Take(context.Background(), algorithms.Check{Spec: from, Key: "k", Cost: 1})
							if err != nil {
								t.Fatal(err)
							}
							if !df[0].Allowed {
								t.Fatalf("seed %d: at %v (requests at %v) the new Spec admits a request the replaced one denies", seed, trace[len(trace)-1], trace)
							}
						}
						clock.Advance(gaps[rng.IntN(len(gaps))])
					}
				}
			})
		}
	}
}
