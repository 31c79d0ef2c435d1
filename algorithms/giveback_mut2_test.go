package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// bucketTaken returns a memory store on a clock at t0 whose token_bucket
// key "k" (10 per second) holds one Take of cost, with that Take's
// decisions.
func bucketTaken(t *testing.T, cost int64) (*algorithms.MemoryStore, *algotest.Clock, algorithms.Check, []algorithms.Decision) {
	t.Helper()
	clock := algotest.NewClock(giveBackT0)
	store := newMemoryStore(t, algorithms.WithClock(clock))
	c := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Second}, Key: "k", Cost: cost}
	ds, err := store.Take(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	return store, clock, c, ds
}

var giveBackT0 = time.Unix(1_800_000_000, 0)

// TestBucketGiveBackOfAResetAlreadyPassed: a token_bucket give-back whose
// decision says the key was back to full before the give-back's instant
// (E = now + ResetAfter − waited <= now; here a ResetAfter below 0, which
// GiveBack takes as it comes) gives nothing back, even when the bucket is
// not full: the units in use are other requests' (bucketGiveBack's r <= 0
// guard; without it a negative ResetAfter wraps in the bounds of the
// Take's deficit and the whole cost comes back).
func TestBucketGiveBackOfAResetAlreadyPassed(t *testing.T) {
	store, _, c, ds := bucketTaken(t, 3)
	ctx := t.Context()
	want := algorithms.Decision{Allowed: true, Limit: 10, Remaining: 7, ResetAfter: 300 * time.Millisecond, NextAfter: 100 * time.Millisecond}
	if ds[0] != want {
		t.Fatalf("Take = %+v, want %+v", ds[0], want)
	}
	for _, ra := range []time.Duration{-time.Second, -time.Nanosecond, 0} {
		d := ds[0]
		d.ResetAfter = ra
		got := make([]algorithms.Refunded, 1)
		if err := store.GiveBack(ctx, got, []algorithms.Check{c}, []algorithms.Decision{d}, 0); err != nil {
			t.Fatal(err)
		}
		if got[0].Given || got[0].Decision != want {
			t.Fatalf("GiveBack with ResetAfter %v = %+v, want nothing given and %+v", ra, got[0], want)
		}
	}
}

// TestBucketGiveBackOfADecisionNotTheTakes gives back, on a token_bucket
// key holding a Take of cost 5 at t0 (deficit 0.5 s), with decisions that
// cannot be that Take's: their ResetAfter and Remaining bound the Take's
// deficit τ to intervals that do not meet (lo >= hi). bucketGiveBack then
// takes τ = hi, the smaller bound, so no more comes back than either bound
// allows, and exactly that much:
//
//   - Remaining 9 (1 unit in use: τ <= 1 unit) and ResetAfter 10 s: one unit
//     comes back (F moves back 0.1 s), not the whole cost the 10 s allow;
//   - Remaining 5 (τ > 4 units) and ResetAfter 1 ns (τ <= 1 ns·L): 1 ns
//     comes back, the ResetAfter bound, not 0.1 ns (the least τ the
//     ResetAfter bound alone would take, without the Remaining bound's 4
//     units as its lower end).
func TestBucketGiveBackOfADecisionNotTheTakes(t *testing.T) {
	for _, tt := range []struct {
		name      string
		remaining int64
		reset     time.Duration
		want      algorithms.Decision
	}{
		{"one unit in use, 10 s to full", 9, 10 * time.Second,
			algorithms.Decision{Allowed: true, Limit: 10, Remaining: 6, ResetAfter: 400 * time.Millisecond, NextAfter: 100 * time.Millisecond}},
		{"five units in use, 1 ns to full", 5, time.Nanosecond,
			algorithms.Decision{Allowed: true, Limit: 10, Remaining: 5, ResetAfter: 500*time.Millisecond - time.Nanosecond, NextAfter: 100*time.Millisecond - time.Nanosecond}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			store, _, c, _ := bucketTaken(t, 5)
			ctx := t.Context()
			d := algorithms.Decision{Allowed: true, Limit: 10, Remaining: tt.remaining, ResetAfter: tt.reset}
			got := make([]algorithms.Refunded, 1)
			if err := store.GiveBack(ctx, got, []algorithms.Check{c}, []algorithms.Decision{d}, 0); err != nil {
				t.Fatal(err)
			}
			if !got[0].Given || got[0].Decision != tt.want {
				t.Fatalf("GiveBack = %+v, want given and %+v", got[0], tt.want)
			}
		})
	}
}

// TestBucketGiveBackNeverMovesFullBeforeNow: a token_bucket give-back
// whose caller reckons early (waited 0, 300 ms after a Take of cost 5)
// gives back no more than the deficit left at the give-back's instant:
// the bucket is full from then on, F = now, not earlier. A Take at an
// earlier instant (the clock went back 200 ms) finds the 200 ms of deficit
// still before F (kills token_bucket.go:228's deleted g = dl, under which
// F moved back to t0 + 0.9 ns and that Take found the bucket full).
func TestBucketGiveBackNeverMovesFullBeforeNow(t *testing.T) {
	store, clock, c, ds := bucketTaken(t, 5)
	ctx := t.Context()
	clock.Set(giveBackT0.Add(300 * time.Millisecond))
	got := make([]algorithms.Refunded, 1)
	if err := store.GiveBack(ctx, got, []algorithms.Check{c}, ds, 0); err != nil {
		t.Fatal(err)
	}
	full := algorithms.Decision{Allowed: true, Limit: 10, Remaining: 10}
	if !got[0].Given || got[0].Decision != full {
		t.Fatalf("GiveBack = %+v, want given and %+v", got[0], full)
	}
	clock.Set(giveBackT0.Add(100 * time.Millisecond))
	d, err := store.Take(ctx, algorithms.Check{Spec: c.Spec, Key: "k"})
	if err != nil {
		t.Fatal(err)
	}
	want := algorithms.Decision{Allowed: true, Limit: 10, Remaining: 7, ResetAfter: 300 * time.Millisecond, NextAfter: 100 * time.Millisecond}
	if d[0] != want {
		t.Fatalf("Take at t0+100ms after the give-back = %+v, want %+v", d[0], want)
	}
}
