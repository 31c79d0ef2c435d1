package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestSlidingKeyOutlivesItsResetAfterAfterGiveBack: a sliding_window key
// written in window k-1 expires at the end of window k. A GiveBack in
// window k of one of its units rolls it into window k (the previous
// window's count, the current one's 0) and keeps that expiry. A Take then
// counts a unit in window k, which must be remembered until the end of
// window k+1; the fast path, on the server's clock, kept the expiry (SET
// KEEPTTL) because the key already held window k, so the key expired at
// the end of window k, a window early, and window k+1 would admit as if
// window k had counted nothing. The Take in window k-1 is made by a store
// whose clock is one window behind the server's (a day: the same offset
// into window k-1 that the server's clock has in window k), and the key
// then given the expiry such a Take on the server's clock would have set.
func TestSlidingKeyOutlivesItsResetAfterAfterGiveBack(t *testing.T) {
	ctx := context.Background()
	client := newClient(t)
	spec := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 10, Window: algorithms.MaxWindow}
	check := algorithms.Check{Spec: spec, Key: "u"}
	prefix := uniquePrefix(t)
	now, err := client.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	W := spec.Window
	if e := time.Duration(now.UnixNano()) % W; e < time.Minute || W-e < time.Minute {
		t.Skip("too near the end of a day (UTC) for the server's clock to stay in one window")
	}
	past, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithClock(algotest.NewClock(now.Add(-W))))
	if err != nil {
		t.Fatal(err)
	}
	s, err := redisstore.New(client, redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	// Two units in window k-1, one of them given back in window k.
	var taken []algorithms.Decision
	for range 2 {
		if taken, err = past.Take(ctx, check); err != nil || !taken[0].Allowed {
			t.Fatalf("Take in window k-1: %v, %v", taken, err)
		}
	}
	// The expiry those Takes would have set on the server's clock, a
	// window ago: the end of window k (the injected clock's expiry is
	// counted from the server's now, a window later).
	keys := keysUnder(t, client, prefix)
	if len(keys) != 1 {
		t.Fatalf("keys under %s: %v", prefix, keys)
	}
	if err := client.PExpire(ctx, keys[0], taken[0].ResetAfter-W).Err(); err != nil {
		t.Fatal(err)
	}
	dst := make([]algorithms.Refunded, 1)
	if err := s.GiveBack(ctx, dst, []algorithms.Check{check}, taken, W); err != nil {
		t.Fatal(err)
	}
	if !dst[0].Given {
		t.Fatalf("GiveBack in window k gave nothing back: %+v", dst[0])
	}
	start := time.Now()
	ds, err := s.Take(ctx, check)
	if err != nil || !ds[0].Allowed {
		t.Fatalf("Take in window k: %v, %v", ds, err)
	}
	ttl, err := client.PTTL(ctx, keys[0]).Result()
	if err != nil {
		t.Fatal(err)
	}
	// The key must live at least until ResetAfter (less the time since the
	// Take, well under a minute).
	if ttl < ds[0].ResetAfter-time.Minute {
		t.Fatalf("after a unit counted in window k the key expires in %v, before its ResetAfter %v (the end of window k+1)", ttl, ds[0].ResetAfter)
	}
	// Nor much later: ResetAfter rounded up to the millisecond plus 1 ms,
	// counted from the Take's write, at most its round trip after its TIME.
	if hi := ds[0].ResetAfter + 3*time.Millisecond + time.Since(start); ttl > hi {
		t.Fatalf("after a unit counted in window k the key expires in %v, after its ResetAfter %v and a few ms (%v)", ttl, ds[0].ResetAfter, hi)
	}
}
