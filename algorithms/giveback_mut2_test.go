package algorithms_test

import (
	"context"
	"errors"
	"fmt"
	"math"
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

// TestGiveBackRefusesBadCalls: a GiveBack whose arguments do not fit
// together, on a closed store or a cancelled context, or with an invalid
// check (a bad Spec, a cost above capacity) is an error, and nothing comes
// back: the valid check before the bad one, whose Take admitted it, still
// has its cost counted afterwards.
func TestGiveBackRefusesBadCalls(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Second}
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tt := range []struct {
		name   string
		ctx    context.Context
		closed bool
		bad    algorithms.Check // second check; its decision admitted
		ds     int              // decisions given
		dst    int              // results given
		waited time.Duration
		want   func(error) bool
	}{
		{name: "fewer decisions", ds: 1, dst: 2},
		{name: "more decisions", ds: 3, dst: 2},
		{name: "fewer results", ds: 2, dst: 1},
		{name: "negative waited", ds: 2, dst: 2, waited: -time.Nanosecond},
		{name: "cancelled", ctx: cancelled, ds: 2, dst: 2, want: func(err error) bool { return errors.Is(err, context.Canceled) }},
		{name: "closed", closed: true, ds: 2, dst: 2, want: func(err error) bool { return errors.Is(err, algorithms.ErrClosed) }},
		{name: "invalid spec", bad: algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Window: time.Second}, Key: "k"}, ds: 2, dst: 2,
			want: func(err error) bool { var se *algorithms.SpecError; return errors.As(err, &se) }},
		{name: "cost above capacity", bad: algorithms.Check{Spec: spec, Key: "k", Cost: 11}, ds: 2, dst: 2,
			want: func(err error) bool { var ce *algorithms.CostError; return errors.As(err, &ce) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newStore(t)
			k := algorithms.Check{Spec: spec, Key: "k", Cost: 3}
			d := take(t, s, k)[0]
			bad := tt.bad
			if bad.Spec == (algorithms.Spec{}) {
				bad = algorithms.Check{Spec: spec, Key: "other"}
			}
			ds := make([]algorithms.Decision, tt.ds)
			for i := range ds {
				ds[i] = d
			}
			c := tt.ctx
			if c == nil {
				c = t.Context()
			}
			if tt.closed {
				s.Close()
			}
			err := s.GiveBack(c, make([]algorithms.Refunded, tt.dst), []algorithms.Check{k, bad}, ds, tt.waited)
			if err == nil || (tt.want != nil && !tt.want(err)) {
				t.Fatalf("GiveBack = %v, want the error", err)
			}
			if tt.closed {
				return
			}
			if got := take(t, s, algorithms.Check{Spec: spec, Key: "k"})[0]; got.Remaining != 6 {
				t.Errorf("after the refused GiveBack, a Take of k: Remaining %d, want 6 (its cost still counted)", got.Remaining)
			}
		})
	}
}

// TestGiveBackOfASpecNeverTaken: a GiveBack of an admitted decision for a
// key whose Spec the store holds no key of gives nothing back and reports
// the key as fresh.
func TestGiveBackOfASpecNeverTaken(t *testing.T) {
	s, _ := newStore(t)
	c := algorithms.Check{Spec: perSecond, Key: "k"}
	d := algorithms.Decision{Allowed: true, Limit: 10, Remaining: 9, ResetAfter: time.Second, NextAfter: time.Second}
	got := make([]algorithms.Refunded, 1)
	if err := s.GiveBack(t.Context(), got, []algorithms.Check{c}, []algorithms.Decision{d}, 0); err != nil {
		t.Fatal(err)
	}
	want := algorithms.Refunded{Decision: algorithms.Decision{Allowed: true, Limit: 10, Remaining: 10}}
	if got[0] != want {
		t.Errorf("GiveBack = %+v, want %+v", got[0], want)
	}
}

// TestGiveBackOfAKeyNotHeldLeavesItsNeighbours: a GiveBack for keys the
// store does not hold, under a Spec of each kind whose table (one shard)
// holds others, gives nothing back, reports the keys fresh, and takes
// nothing from the held keys, whichever slots the absent keys' hashes
// would take.
func TestGiveBackOfAKeyNotHeldLeavesItsNeighbours(t *testing.T) {
	for _, k := range algorithms.Kinds {
		t.Run(string(k), func(t *testing.T) {
			s, _ := newStore(t, algorithms.WithMaxKeys(256)) // one shard
			spec := kindSpec(k, 10, 5)
			var held []algorithms.Check
			var d algorithms.Decision
			for i := range 20 {
				c := algorithms.Check{Spec: spec, Key: fmt.Sprint("held", i), Cost: 3}
				held = append(held, c)
				d = take(t, s, c)[0]
			}
			before := make([]algorithms.Decision, len(held))
			if err := s.Peek(t.Context(), before, held); err != nil {
				t.Fatal(err)
			}
			for i := range 20 {
				c := algorithms.Check{Spec: spec, Key: fmt.Sprint("absent", i), Cost: 3}
				got := make([]algorithms.Refunded, 1)
				if err := s.GiveBack(t.Context(), got, []algorithms.Check{c}, []algorithms.Decision{d}, 0); err != nil {
					t.Fatal(err)
				}
				if got[0].Given || got[0].Decision.Remaining != spec.Capacity() {
					t.Fatalf("GiveBack of %s, never taken = %+v, want nothing given, Remaining %d", c.Key, got[0], spec.Capacity())
				}
			}
			after := make([]algorithms.Decision, len(held))
			if err := s.Peek(t.Context(), after, held); err != nil {
				t.Fatal(err)
			}
			for i := range held {
				if after[i] != before[i] {
					t.Errorf("%s after the give-backs of absent keys: %+v, want as before %+v", held[i].Key, after[i], before[i])
				}
			}
		})
	}
}

// TestLogGiveBackOfATakeLongGone: a sliding_log give-back whose reckoning
// puts the Take's instant far before the window (waited 5 days; or a
// ResetAfter as negative as a Duration goes, less 1 ns waited, which must
// not wrap round to the future) gives nothing back: the units logged now
// are other requests'.
func TestLogGiveBackOfATakeLongGone(t *testing.T) {
	for _, tt := range []struct {
		name   string
		reset  time.Duration
		waited time.Duration
	}{
		{"waited 5 days", time.Second, 5 * 24 * time.Hour},
		{"ResetAfter min, waited 1 ns", math.MinInt64, time.Nanosecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, _ := newStore(t)
			c := algorithms.Check{Spec: kindSpec(algorithms.SlidingLog, 10, 0), Key: "k", Cost: 3}
			take(t, s, c)
			d := algorithms.Decision{Allowed: true, Limit: 10, Remaining: 7, ResetAfter: tt.reset}
			got := make([]algorithms.Refunded, 1)
			if err := s.GiveBack(t.Context(), got, []algorithms.Check{c}, []algorithms.Decision{d}, tt.waited); err != nil {
				t.Fatal(err)
			}
			if got[0].Given || got[0].Decision.Remaining != 7 {
				t.Errorf("GiveBack = %+v, want nothing given, Remaining 7", got[0])
			}
		})
	}
}

// TestGiveBackReportsRepeatedKeysAsTakeDoes: what a GiveBack reports is
// what a Take of the same checks at its instant would, without consuming:
// a check repeated on one key is decided on the state after the checks
// before it. Three checks of 3 on a key holding 2 of 10: the third does not
// fit, so that Take is denied, and it (which consumes nothing) reports what
// the GiveBack must.
func TestGiveBackReportsRepeatedKeysAsTakeDoes(t *testing.T) {
	s, _ := newStore(t)
	take(t, s, algorithms.Check{Spec: perSecond, Key: "k", Cost: 2})
	c := algorithms.Check{Spec: perSecond, Key: "k", Cost: 3}
	checks := []algorithms.Check{c, c, c}
	got := make([]algorithms.Refunded, len(checks))
	denied := make([]algorithms.Decision, len(checks)) // nothing comes back
	if err := s.GiveBack(t.Context(), got, checks, denied, 0); err != nil {
		t.Fatal(err)
	}
	want := take(t, s, checks...)
	if want[2].Allowed {
		t.Fatalf("Take of three checks of 3 on 2 of 10 = %+v, want the third denied", want)
	}
	for i := range got {
		if got[i].Given || got[i].Decision != want[i] {
			t.Errorf("GiveBack, check %d = %+v, want nothing given and the Take's %+v", i, got[i], want[i])
		}
	}
}

// TestWindowGiveBackAfterTheClockWentBackDays: a window kind decides a
// request at an instant before its key's latest at that latest instant
// (see "Time that goes back"), so the ResetAfter of a Take after the clock
// stepped back five days points five days ahead. GiveBack must still find
// that Take's window (bucket, logged instant) from E = now + ResetAfter −
// waited, as GiveBacker documents and the model does: the key's units come
// back. (GiveBack used to bound ResetAfter − waited to ±4 days from now,
// not from the key's instant, and gave nothing back.)
func TestWindowGiveBackAfterTheClockWentBackDays(t *testing.T) {
	for _, k := range []algorithms.Kind{algorithms.FixedWindow, algorithms.SlidingWindow, algorithms.SlidingBuckets, algorithms.SlidingLog} {
		for _, back := range []time.Duration{3*24*time.Hour + 12*time.Hour, 5 * 24 * time.Hour, 400 * 24 * time.Hour} {
			t.Run(fmt.Sprintf("%s/%v", k, back), func(t *testing.T) {
				s, clock := newStore(t)
				c := algorithms.Check{Spec: kindSpec(k, 10, 5), Key: "k", Cost: 2}
				take(t, s, algorithms.Check{Spec: c.Spec, Key: "k"})
				clock.Advance(-back)
				ds := take(t, s, c)
				if !ds[0].Allowed || ds[0].ResetAfter <= back {
					t.Fatalf("Take after the clock went back %v = %+v, want admitted, ResetAfter beyond %v", back, ds[0], back)
				}
				got := make([]algorithms.Refunded, 1)
				if err := s.GiveBack(t.Context(), got, []algorithms.Check{c}, ds, 0); err != nil {
					t.Fatal(err)
				}
				if !got[0].Given || got[0].Decision.Remaining != 9 {
					t.Errorf("GiveBack of that Take = %+v, want given, Remaining 9", got[0])
				}
			})
		}
	}
}
