package redisstore_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestWindowGiveBackAfterTheClockWentBackDays mirrors the memory store's
// test of that name: a window kind decides a request at an instant before
// its key's latest at that latest instant (see "Clocks that go back" in
// doc.go), so the ResetAfter of a Take after the injected clock stepped
// back days points days ahead, and GiveBack must still find that Take's
// window (sub-window, logged instant) from E = now + ResetAfter − waited:
// its units come back (Given, Remaining 9 of 10 with the first Take's unit
// still spent), as in the memory store. Stepped back 400 days, further
// than the 26 (23) days doc.go bounds the states kept ahead by, the key is
// treated as expired instead: the Take is decided afresh at the earlier
// instant, and the give-back leaves the key full (Remaining 10). (GiveBack
// used to bound ResetAfter − waited to ±4 days from now, not from the
// key's instant, and gave nothing back 5 or 22 days back.)
func TestWindowGiveBackAfterTheClockWentBackDays(t *testing.T) {
	ctx := context.Background()
	for name, client := range map[string]redis.UniversalClient{"function": newClient(t), "script": noFunctionsClient(t)} {
		for _, k := range []algorithms.Kind{algorithms.FixedWindow, algorithms.SlidingWindow, algorithms.SlidingBuckets, algorithms.SlidingLog} {
			for _, back := range []time.Duration{3*24*time.Hour + 12*time.Hour, 5 * 24 * time.Hour, 22 * 24 * time.Hour, 400 * 24 * time.Hour} {
				t.Run(fmt.Sprintf("%s/%s/%v", name, k, back), func(t *testing.T) {
					clock := algotest.NewClock(time.Date(2026, 11, 30, 7, 0, 0, 123456789, time.UTC))
					s, err := redisstore.New(client, redisstore.WithClock(clock), redisstore.WithPrefix(uniquePrefix(t)))
					if err != nil {
						t.Fatal(err)
					}
					spec := algorithms.Spec{Algorithm: k, Limit: 10, Window: time.Second}
					if k == algorithms.SlidingBuckets {
						spec.Buckets = 5
					}
					c := algorithms.Check{Spec: spec, Key: "k", Cost: 2}
					if _, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "k"}); err != nil {
						t.Fatal(err)
					}
					clock.Advance(-back)
					ds, err := s.Take(ctx, c)
					if err != nil {
						t.Fatal(err)
					}
					kept := back < 23*24*time.Hour // the state ahead is kept
					want := int64(9)
					switch {
					case !ds[0].Allowed:
						t.Fatalf("Take after the clock went back %v = %+v, want admitted", back, ds[0])
					case kept && (ds[0].Remaining != 7 || ds[0].ResetAfter <= back):
						t.Fatalf("Take after the clock went back %v = %+v, want Remaining 7, ResetAfter beyond %v", back, ds[0], back)
					case !kept:
						if ds[0].Remaining != 8 || ds[0].ResetAfter > 2*spec.Window {
							t.Fatalf("Take after the clock went back %v = %+v, want the key decided afresh (Remaining 8, ResetAfter within two windows)", back, ds[0])
						}
						want = 10
					}
					got := make([]algorithms.Refunded, 1)
					if err := s.GiveBack(ctx, got, []algorithms.Check{c}, ds, 0); err != nil {
						t.Fatal(err)
					}
					if !got[0].Given || got[0].Decision.Remaining != want {
						t.Errorf("GiveBack of that Take = %+v, want given, Remaining %d", got[0], want)
					}
				})
			}
		}
	}
}

// TestWindowGiveBackHugeReckoningMatchesMemoryStore: the window kinds'
// reckoning ResetAfter − waited goes to the script within ±(2^51 +
// 4·MaxWindow) (windowArg), far beyond any state; a give-back whose
// decision states a reckoning at or beyond that bound, either way, fails
// nothing and gives back as the memory store does (nothing, or for
// sliding_log the newest instant, the nearest to a reckoning far ahead),
// its arithmetic exact.
func TestWindowGiveBackHugeReckoningMatchesMemoryStore(t *testing.T) {
	ctx := context.Background()
	client := newClient(t)
	const bound = 1<<51 + 4*time.Duration(algorithms.MaxWindow)
	cases := []struct{ resetAfter, waited time.Duration }{
		{math.MaxInt64, 0}, {math.MinInt64, 0}, {bound, 0}, {bound + 1, 0}, {-bound, 0}, {-bound - 1, 0},
		{1 << 51, 0}, {math.MaxInt64, math.MaxInt64}, {0, math.MaxInt64}, {bound, 2 * bound}, {-bound, 1},
	}
	for _, k := range []algorithms.Kind{algorithms.FixedWindow, algorithms.SlidingWindow, algorithms.SlidingBuckets, algorithms.SlidingLog} {
		for _, w := range []time.Duration{time.Millisecond, 24 * time.Hour} {
			spec := algorithms.Spec{Algorithm: k, Limit: 10, Window: w}
			if k == algorithms.SlidingBuckets {
				spec.Buckets = 4
			}
			for i, tc := range cases {
				clk := &manualClock{t: time.Date(2026, 11, 30, 7, 0, 0, 123456789, time.UTC)}
				mem, rs := pairedStores(t, client, clk)
				c := algorithms.Check{Spec: spec, Key: fmt.Sprint("k", i), Cost: 2}
				var dm, dr []algorithms.Decision
				var err error
				if dm, err = mem.Take(ctx, c); err != nil {
					t.Fatal(err)
				}
				if dr, err = rs.Take(ctx, c); err != nil {
					t.Fatal(err)
				}
				dm[0].ResetAfter, dr[0].ResetAfter = tc.resetAfter, tc.resetAfter
				gm, gr := make([]algorithms.Refunded, 1), make([]algorithms.Refunded, 1)
				if err := mem.GiveBack(ctx, gm, []algorithms.Check{c}, dm, tc.waited); err != nil {
					t.Fatal(err)
				}
				if err := rs.GiveBack(ctx, gr, []algorithms.Check{c}, dr, tc.waited); err != nil {
					t.Fatalf("%s window %v: GiveBack with ResetAfter %d, waited %d: %v", k, w, int64(tc.resetAfter), int64(tc.waited), err)
				}
				if gr[0] != gm[0] {
					t.Errorf("%s window %v: GiveBack with ResetAfter %d, waited %d = %+v, memory store %+v", k, w, int64(tc.resetAfter), int64(tc.waited), gr[0], gm[0])
				}
			}
		}
	}
}
