package algorithms_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestMemoryStoreClockBackAfterADropAheadLocksNoNewClientOut: a clock
// stepped days ahead and back (a VM resumed with a stale offset, a bad NTP
// step corrected) while the store dropped keys idle long before the step
// must not decide every key the shards no longer hold days ahead: a
// client never seen would be held to a window, a log or a bucket days
// away, and denied for days once at its limit. The dropped keys were back
// to their full allowance a window after the step began; a key not held
// is decided no later than needed for them.
func TestMemoryStoreClockBackAfterADropAheadLocksNoNewClientOut(t *testing.T) {
	for _, spec := range []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Second},
		{Algorithm: algorithms.SlidingWindow, Limit: 10, Window: time.Second},
		{Algorithm: algorithms.SlidingLog, Limit: 10, Window: time.Second},
		{Algorithm: algorithms.SlidingBuckets, Limit: 10, Window: time.Second, Buckets: 4},
		{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Second},
		{Algorithm: algorithms.LeakyBucket, Limit: 10, Window: time.Second},
		{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: time.Second, MaxDelay: time.Second},
	} {
		t.Run(string(spec.Algorithm), func(t *testing.T) {
			s, c := newStore(t)
			for i := range 2000 { // keys in every shard
				take(t, s, algorithms.Check{Spec: spec, Key: "old" + strconv.Itoa(i)})
			}
			c.Advance(72 * time.Hour)
			if n := s.Sweep(); n != 2000 {
				t.Fatalf("Sweep 72h on dropped %d keys, want 2000", n)
			}
			c.Advance(-72*time.Hour + 2*time.Second)
			newKey := algorithms.Check{Spec: spec, Key: "brand-new"}
			var d algorithms.Decision
			for range spec.Capacity() + 1 {
				d = take(t, s, newKey)[0]
			}
			if d.Allowed || d.RetryAfter > 2*time.Second {
				t.Errorf("a key never seen, over its limit 2s after the keys dropped at +72h were last used: %+v, want denied for at most 2s (two windows)", d)
			}
		})
	}
}
