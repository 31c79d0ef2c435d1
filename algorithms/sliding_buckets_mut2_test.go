package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestEvictionTakesAnIdleBucketsKeyWithAStaleSum: at the WithMaxKeys
// bound, a sliding_buckets key whose requests have all left the window is
// idle (it uses nothing), even though its ring, not rolled since, still
// sums to its limit: eviction takes it before a key in use, here 1 of 100
// under another Spec, whose state must survive the new key's arrival.
func TestEvictionTakesAnIdleBucketsKeyWithAStaleSum(t *testing.T) {
	buckets := algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: time.Second, Buckets: 5}
	hourly := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Hour}
	s, clock := newStore(t, algorithms.WithMaxKeys(2)) // one shard of 2 keys
	take(t, s, algorithms.Check{Spec: buckets, Key: "gone", Cost: 5})
	inUse := algorithms.Check{Spec: hourly, Key: "in-use"}
	take(t, s, inUse)
	clock.Advance(2 * time.Second) // "gone"'s requests have left its window
	if d := take(t, s, algorithms.Check{Spec: buckets, Key: "new"}); !d[0].Allowed {
		t.Fatalf("the new key's first request denied: %+v", d[0])
	}
	if got := s.Len(); got != 2 {
		t.Fatalf("Len = %d, want the bound 2", got)
	}
	if d := take(t, s, inUse)[0]; d.Remaining != 98 {
		t.Errorf("the key in use after the eviction: Remaining %d, want 98 (99: its state was evicted in place of the idle key's)", d.Remaining)
	}
}
