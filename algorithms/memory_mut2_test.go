package algorithms_test

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestEvictionAnchorsKeysDroppedAsIdle: a key evicted as idle at the
// WithMaxKeys bound (its fixed window, full, had ended at the eviction's
// instant) is decided, when the clock then goes back into that window, at
// the eviction's instant, as a key a sweep dropped is ("Time that goes
// back"): in the window after, its ResetAfter lengthened by the difference,
// not fresh in the window it had filled.
func TestEvictionAnchorsKeysDroppedAsIdle(t *testing.T) {
	s, clock := newStore(t, algorithms.WithMaxKeys(2)) // one shard of 2 keys
	old := algorithms.Check{Spec: perSecond, Key: "old", Cost: 10}
	other := algorithms.Check{Spec: perSecond, Key: "other"}
	take(t, s, old)
	take(t, s, other)
	clock.Advance(1500 * time.Millisecond)
	take(t, s, other) // in use in the window [1 s, 2 s): "old" is the idle one
	take(t, s, algorithms.Check{Spec: perSecond, Key: "new"})
	clock.Set(epoch.Add(900 * time.Millisecond))
	d := take(t, s, algorithms.Check{Spec: perSecond, Key: "old"})[0]
	want := algorithms.Decision{Allowed: true, Limit: 10, Remaining: 9, ResetAfter: 1100 * time.Millisecond, NextAfter: 1100 * time.Millisecond}
	if d != want {
		t.Errorf("Take of the evicted key at 0.9 s = %+v, want %+v (decided at the eviction's 1.5 s)", d, want)
	}
}

// TestTakeIntoAfterSweepDoesNotAllocate: TakeInto's promise of no
// allocation for a Take of several checks on held keys holds after a Sweep
// that left one of the shard's tables without keys: the sweep's compaction
// is done once, not again at the start of every later Take of the shard
// (kills memory.go:741, compact's sh.compactDue = false cut or made true).
func TestTakeIntoAfterSweepDoesNotAllocate(t *testing.T) {
	s, clock := newStore(t)
	// One key under three Specs: one shard, whichever it is.
	idle := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Second}, Key: "k"}
	busy := []algorithms.Check{
		{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: algorithms.MaxLimit, Window: time.Hour}, Key: "k"},
		{Spec: algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: algorithms.MaxLimit, Window: time.Hour}, Key: "k"},
	}
	take(t, s, idle)
	take(t, s, busy...)
	clock.Advance(2 * time.Second) // idle's window is over; busy's hour is not
	if n := s.Sweep(); n != 1 {
		t.Fatalf("Sweep dropped %d keys, want 1 (the idle one)", n)
	}
	dst := make([]algorithms.Decision, len(busy))
	if err := s.TakeInto(ctx, dst, busy); err != nil || !dst[0].Allowed || !dst[1].Allowed {
		t.Fatalf("TakeInto after the Sweep = %v, %+v", err, dst)
	}
	if n := testing.AllocsPerRun(100, func() { s.TakeInto(ctx, dst, busy) }); n != 0 {
		t.Errorf("TakeInto with 2 checks on held keys after a Sweep allocates %v times per call, want 0", n)
	}
}

// TestMemoryStoreRefundOfMoreThanEightChecks: a Refund of an admitted Take
// of more leaky_queue checks than Take decides without allocating (8) gives
// every place back (kills memory.go:1104's > made <= and :1105's cut).
func TestMemoryStoreRefundOfMoreThanEightChecks(t *testing.T) {
	s, _ := newStore(t)
	queue := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 5 * time.Second}
	checks := make([]algorithms.Check, 9)
	for i := range checks {
		checks[i] = algorithms.Check{Spec: queue, Key: "q" + strconv.Itoa(i)}
	}
	take(t, s, checks...)
	ds := take(t, s, checks...) // a second place in each queue, 1 s out
	dst := make([]algorithms.Refunded, len(checks))
	if err := s.Refund(ctx, dst, checks, ds, 0); err != nil {
		t.Fatal(err)
	}
	for i, r := range dst {
		if !r.Given || !r.Allowed || r.Remaining != queue.Capacity()-1 {
			t.Errorf("Refund of check %d of 9 = %+v, want the place given and the queue's look at one place held (%d left)", i, r, queue.Capacity()-1)
		}
	}
	for i, d := range take(t, s, checks...) {
		if !d.Allowed || d.Delay != time.Second {
			t.Errorf("queue %d after the Refund: %+v, want admitted 1s out (its second place came back)", i, d)
		}
	}
}

// TestMemoryStoreRefundDepartedLongAgo: a Refund whose Delay less waited
// says the place departed about as long ago as a Duration can say (near
// MinInt64, saturated there) gives nothing back, though the queue holds a
// place of the same cost: that place is not the one refunded. Kills
// memory.go:1138's saturation at MinInt64 (+0) and :1139's bound made
// MinInt64+waited, whose negation wraps to 0: a place due now, given.
func TestMemoryStoreRefundDepartedLongAgo(t *testing.T) {
	queue := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 5 * time.Second}
	for _, tc := range []struct{ delay, waited time.Duration }{
		{math.MinInt64, 0},
		{math.MinInt64 + 1, 1},
		{-time.Second, math.MaxInt64},
	} {
		s, _ := newStore(t)
		c := algorithms.Check{Spec: queue, Key: "q"}
		ds := take(t, s, c) // one place, the queue's only one
		ds[0].Delay = tc.delay
		dst := make([]algorithms.Refunded, 1)
		if err := s.Refund(ctx, dst, []algorithms.Check{c}, ds, tc.waited); err != nil {
			t.Fatal(err)
		}
		if dst[0].Given || dst[0].Remaining != queue.Capacity()-1 {
			t.Errorf("Refund with Delay %d, waited %d = %+v, want nothing given (one place held, %d left)", tc.delay, tc.waited, dst[0], queue.Capacity()-1)
		}
		if d := take(t, s, c)[0]; !d.Allowed || d.Delay != time.Second {
			t.Errorf("Delay %d, waited %d: next Take = %+v, want admitted 1s out (the place kept)", tc.delay, tc.waited, d)
		}
	}
}

// TestMemoryStoreFloodKeepsClientsAtALimitOfOne: clients of a Spec of
// Limit 1, each at its limit (one unit used, all of its capacity), survive
// a flood of one-request keys under another Spec at the WithMaxKeys bound:
// eviction weighs shares, not units, and a sampled key with one unit used
// does not end the search before the flood's table is sampled (kills
// memory.go:998's bestUsed == 0 made == 1, which evicted them whenever the
// sample began in their table).
func TestMemoryStoreFloodKeepsClientsAtALimitOfOne(t *testing.T) {
	if evicted, clients := evictedByFlood(t, 1); evicted > 0 {
		t.Errorf("%d of %d clients at their limit of 1 were evicted (admitted again) by a flood of one-request keys under another spec", evicted, clients)
	}
}
