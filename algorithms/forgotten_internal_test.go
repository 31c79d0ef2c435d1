package algorithms

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"
)

// TestForgottenHelpers holds the record of keys forgotten in use at its
// edges: how many classes a shard has, before's saturation at MinInt64
// (a give-back's waited is any non-negative Duration), and a record that
// keeps the latest instant and tells a Take reckoned before it from one at
// or after it.
func TestForgottenHelpers(t *testing.T) {
	for _, c := range []struct{ perShard, want int }{
		{0, 64}, {1, 64}, {256, 64}, {1000, 64}, {1032, 128}, {15625, 1024}, {1 << 20, 1 << 17},
	} {
		s := &MemoryStore{perShrd: c.perShard}
		if got := s.forgotClasses(); got != c.want {
			t.Errorf("forgotClasses() with %d keys a shard = %d, want %d", c.perShard, got, c.want)
		}
	}
	for _, c := range []struct {
		t    int64
		d    time.Duration
		want int64
	}{
		{100, 30, 70},
		{100, 0, 100},
		{math.MinInt64, 0, math.MinInt64},
		{math.MinInt64 + 5, 5, math.MinInt64},
		{math.MinInt64 + 5, 6, math.MinInt64},
		{math.MaxInt64, math.MaxInt64, 0},
		{-1, math.MaxInt64, math.MinInt64},
		{0, math.MaxInt64, -math.MaxInt64},
		{1, math.MaxInt64, 1 - math.MaxInt64},
	} {
		if got := before(c.t, c.d); got != c.want {
			t.Errorf("before(%d, %d) = %d, want %d", c.t, int64(c.d), got, c.want)
		}
	}
	var sh shard
	if sh.forgotSince(42, math.MinInt64) {
		t.Error("forgotSince on a shard that forgot nothing = true")
	}
	sh.noteForgotten(42, 100, 64)
	sh.noteForgotten(42, 50, 64) // an earlier instant (a clock gone back) keeps the later
	for _, c := range []struct {
		since int64
		want  bool
	}{{math.MinInt64, true}, {99, true}, {100, false}, {101, false}} {
		if got := sh.forgotSince(42, c.since); got != c.want {
			t.Errorf("forgotten at 100: forgotSince(since %d) = %v, want %v", c.since, got, c.want)
		}
	}
	if other := uint64(42) ^ 1<<24; sh.forgotSince(other, 0) {
		t.Error("forgotSince of a hash of another class = true")
	}
}

// TestGiveBackAfterEvictionByClass: the store notes the class of a key
// evicted in use, not the key, so a GiveBack of a Take gives back when
// only keys of other classes were evicted since (the usual case at the
// bound: a new key evicts another client's), and gives nothing when a key
// of the same class was, although the key itself was not (erring towards
// denying, as MemoryStore.GiveBack says). A key evicted at the Take's
// own instant counts as evicted before it.
func TestGiveBackAfterEvictionByClass(t *testing.T) {
	ctx := context.Background()
	spec := Spec{Algorithm: FixedWindow, Limit: 10, Window: time.Minute}
	s, clk := newReviewStore(t, WithMaxKeys(2)) // one shard of two keys
	classes := s.forgotClasses()
	class := func(k string) int { return forgotClass(s.hash(k), classes) }
	var same, other []string
	for i := 0; len(same) < 3 || len(other) < 3; i++ {
		k := "k" + strconv.Itoa(i)
		if class(k) == class("victim") {
			same = append(same, k)
		} else {
			other = append(other, k)
		}
	}
	takeOf := func(k string, cost int64) []Decision {
		t.Helper()
		ds, err := s.Take(ctx, Check{Spec: spec, Key: k, Cost: cost})
		if err != nil || !ds[0].Allowed {
			t.Fatalf("Take(%s, %d) = %+v, %v", k, cost, ds, err)
		}
		return ds
	}
	giveBack := func(ds []Decision, waited time.Duration) bool {
		t.Helper()
		dst := make([]Refunded, 1)
		if err := s.GiveBack(ctx, dst, []Check{{Spec: spec, Key: "victim", Cost: 1}}, ds, waited); err != nil {
			t.Fatal(err)
		}
		return dst[0].Given
	}
	const ms = time.Millisecond
	takeOf("victim", 5) // 5 of 10: never the least used, never evicted
	ds := takeOf("victim", 1)
	// Keys of another class enter, one evicting the other (1 of 10 each):
	// noted, but not in the victim's class.
	takeOf(other[0], 1)
	clk.Advance(ms)
	takeOf(other[1], 1)
	clk.Advance(ms)
	takeOf(other[2], 1)
	if !giveBack(ds, 2*ms) {
		t.Error("GiveBack after evictions of keys of other classes: nothing given, want the unit back")
	}
	ds = takeOf("victim", 1)
	// A key of the victim's class evicted in use after the Take.
	takeOf(same[0], 1) // evicts other[2]
	clk.Advance(ms)
	takeOf(same[1], 1) // evicts same[0], of the victim's class
	if giveBack(ds, ms) {
		t.Error("GiveBack after an eviction of another key of the victim's class: given, want nothing (the class is all the store knows)")
	}
	// An eviction at the instant the Take is reckoned at counts as before
	// it: a later Take is given back, with the clock standing still.
	ds = takeOf("victim", 1)
	if !giveBack(ds, 0) {
		t.Error("GiveBack of a Take at the instant of the last eviction of its class, waited 0: nothing given, want the unit back")
	}
	if got := s.Len(); got != 2 {
		t.Errorf("Len = %d, want the bound 2", got)
	}
}
