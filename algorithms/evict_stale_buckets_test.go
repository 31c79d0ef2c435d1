package algorithms_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestMemoryStoreEvictionWeighsBucketsInTheWindow: eviction at the
// WithMaxKeys bound weighs a sliding_buckets key by what its window holds
// at the instant, not by its ring's sum, which still counts the buckets
// that have left the window since the key was last counted. Six keys used
// 5 of 10 a minute ago and 1 half a minute ago (1 in the window now: the
// ring's sum says 6), a client uses 3 now and another 4; a new key makes
// room by evicting one of the six, never the client.
func TestMemoryStoreEvictionWeighsBucketsInTheWindow(t *testing.T) {
	s, clock := newStore(t, algorithms.WithMaxKeys(8)) // one shard of 8 keys: every key sampled
	spec := algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 10, Window: time.Minute, Buckets: 6}
	check := func(key string, cost int64) algorithms.Check {
		return algorithms.Check{Spec: spec, Key: key, Cost: cost}
	}
	for i := range 6 {
		take(t, s, check("stale"+strconv.Itoa(i), 5))
	}
	clock.Advance(30 * time.Second)
	for i := range 6 {
		take(t, s, check("stale"+strconv.Itoa(i), 1))
	}
	clock.Advance(30 * time.Second)
	take(t, s, check("client", 3))
	take(t, s, check("other", 4))
	clock.Advance(5 * time.Second)
	if n := s.Len(); n != 8 {
		t.Fatalf("Len = %d before the new key, want 8", n)
	}
	take(t, s, check("new", 1))
	var d [1]algorithms.Decision
	if err := s.Peek(ctx, d[:], []algorithms.Check{check("client", 1)}); err != nil {
		t.Fatal(err)
	}
	if d[0].Remaining != 7 {
		t.Errorf("the client using 3 of 10 was evicted for keys using 1 in their window (Remaining %d, want 7)", d[0].Remaining)
	}
	held := 0
	for i := range 6 {
		if err := s.Peek(ctx, d[:], []algorithms.Check{check("stale"+strconv.Itoa(i), 1)}); err != nil {
			t.Fatal(err)
		}
		if d[0].Remaining == 9 {
			held++
		}
	}
	if held != 5 {
		t.Errorf("%d of the six keys using 1 in their window held after the eviction, want 5", held)
	}
}
