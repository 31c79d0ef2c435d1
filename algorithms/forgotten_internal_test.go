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
	for _, c := range []struct{ perShard, classes, recent int }{
		{0, 64, 64}, {1, 64, 64}, {256, 64, 64}, {1000, 64, 125}, {1032, 128, 129}, {2048, 256, 256}, {15625, 1024, 256}, {1 << 20, 1 << 17, 256},
	} {
		if got := forgotClasses(c.perShard); got != c.classes {
			t.Errorf("forgotClasses(%d) = %d, want %d", c.perShard, got, c.classes)
		}
		if got := forgotRecent(c.perShard); got != c.recent {
			t.Errorf("forgotRecent(%d) = %d, want %d", c.perShard, got, c.recent)
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
	sameClass := uint64(42) ^ 1<<40 // other bits than the class's
	if forgotClass(sameClass, minForgotClasses) != forgotClass(42, minForgotClasses) {
		t.Fatal("the hash meant to share 42's class does not")
	}
	sh.noteForgotten(42, 100, 0)
	for _, c := range []struct {
		h     uint64
		since int64
		want  bool
	}{
		{42, math.MinInt64, true}, {42, 99, true}, {42, 100, false}, {42, 101, false},
		// Held among the recent evictions: the key's own hash, not its class.
		{sameClass, 99, false}, {42 ^ 1<<24, 99, false},
	} {
		if got := sh.forgotSince(c.h, c.since); got != c.want {
			t.Errorf("42 forgotten at 100: forgotSince(%#x, since %d) = %v, want %v", c.h, c.since, got, c.want)
		}
	}
	// minForgotRecent more evictions, at 200 on: 42 leaves the recent ones
	// for its class, which the other key of the class then answers for.
	for i := range minForgotRecent {
		sh.noteForgotten(uint64(1000+i)<<30, int64(200+i), 0)
	}
	for _, c := range []struct {
		h     uint64
		since int64
		want  bool
	}{
		{42, 99, true}, {42, 100, false}, {sameClass, 99, true}, {sameClass, 100, false},
		{1000 << 30, 199, true}, {1000 << 30, 200, false}, // the oldest of the recent ones
		{1001 << 30, 200, true}, {1001 << 30, 201, false},
		{uint64(1000+minForgotRecent-1) << 30, 262, true}, {uint64(1000+minForgotRecent-1) << 30, 263, false},
	} {
		if got := sh.forgotSince(c.h, c.since); got != c.want {
			t.Errorf("after %d more evictions: forgotSince(%#x, since %d) = %v, want %v", minForgotRecent, c.h, c.since, got, c.want)
		}
	}
}

// TestGiveBackAfterEvictionByClass: the store notes the hash of each of
// the latest keys it evicted in use, and only the class of older ones. A
// GiveBack of a Take gives back when other keys were evicted since, of
// its class or not, while they are among the latest (the usual case at the
// bound: a new key evicts another client's); it gives nothing when a key
// of its class was evicted since and more evictions have pushed that one
// out of the latest, although the key itself was not (erring towards
// denying, as MemoryStore.GiveBack says). A key evicted at the Take's own
// instant counts as evicted before it.
func TestGiveBackAfterEvictionByClass(t *testing.T) {
	ctx := context.Background()
	spec := Spec{Algorithm: FixedWindow, Limit: 10, Window: time.Minute}
	s, clk := newReviewStore(t, WithMaxKeys(2)) // one shard of two keys
	classes, recent := forgotClasses(s.perShrd), forgotRecent(s.perShrd)
	class := func(k string) int { return forgotClass(s.hash(k), classes) }
	var same, other []string
	for i := 0; len(same) < 3 || len(other) < recent+3; i++ {
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
	// Keys of another class enter, one evicting the other (1 of 10 each).
	takeOf(other[0], 1)
	clk.Advance(ms)
	takeOf(other[1], 1)
	clk.Advance(ms)
	takeOf(other[2], 1)
	if !giveBack(ds, 2*ms) {
		t.Error("GiveBack after evictions of keys of other classes: nothing given, want the unit back")
	}
	clk.Advance(ms)
	ds = takeOf("victim", 1)
	// A key of the victim's class evicted in use after the Take: among
	// the latest evictions, told from the victim by its hash.
	takeOf(same[0], 1) // evicts other[2]
	clk.Advance(ms)
	takeOf(same[1], 1) // evicts same[0], of the victim's class
	if !giveBack(ds, ms) {
		t.Error("GiveBack after an eviction of another key of the victim's class, among the latest: nothing given, want the unit back")
	}
	clk.Advance(ms)
	ds = takeOf("victim", 1)
	clk.Advance(ms)
	takeOf(same[2], 1) // evicts same[1], of the victim's class, after the Take
	// recent more evictions push it out of the latest, to its class.
	for _, k := range other[3 : 3+recent] {
		takeOf(k, 1)
	}
	if giveBack(ds, ms) {
		t.Error("GiveBack after an eviction of another key of the victim's class, no longer among the latest: given, want nothing (its class is all the store knows of it)")
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
