package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestMinTTLWithClockOrderFree: WithMinTTL and WithClock give the same
// expiry in either order. WithClock's DefaultClockTTL is the default when
// no WithMinTTL is given; an explicit WithMinTTL, zero included, wins
// wherever it stands among the options.
func TestMinTTLWithClockOrderFree(t *testing.T) {
	client := newClient(t)
	ctx := context.Background()
	clk := algotest.NewClock(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))
	// A one-second fixed window: its key matters for at most a second.
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Second}
	for _, tc := range []struct {
		name    string
		opts    []redisstore.Option
		atLeast time.Duration // the key's expiry, as PTTL reads it right after the Take
		atMost  time.Duration // both zero: from the Take's ResetAfter, to the millisecond
	}{
		{"clock alone", []redisstore.Option{redisstore.WithClock(clk)}, redisstore.DefaultClockTTL - time.Minute, redisstore.DefaultClockTTL + time.Second},
		// No minimum: the key expires with its state, ResetAfter (a second
		// at 08:00) rounded up to the millisecond plus 1 ms, in Redis's
		// real time, which a PX half as long or a thousand times longer fails.
		{"clock then min 0", []redisstore.Option{redisstore.WithClock(clk), redisstore.WithMinTTL(0)}, 0, 0},
		{"min 0 then clock", []redisstore.Option{redisstore.WithMinTTL(0), redisstore.WithClock(clk)}, 0, 0},
		{"clock then min 2h", []redisstore.Option{redisstore.WithClock(clk), redisstore.WithMinTTL(2 * time.Hour)}, 2*time.Hour - time.Minute, 2*time.Hour + time.Second},
		{"min 2h then clock", []redisstore.Option{redisstore.WithMinTTL(2 * time.Hour), redisstore.WithClock(clk)}, 2*time.Hour - time.Minute, 2*time.Hour + time.Second},
	} {
		prefix := uniquePrefix(t)
		s, err := redisstore.New(client, append(tc.opts, redisstore.WithPrefix(prefix))...)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		d, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "k"})
		if err != nil {
			t.Fatal(err)
		}
		keys := keysUnder(t, client, prefix)
		if len(keys) != 1 {
			t.Fatalf("%s: keys %v, want one", tc.name, keys)
		}
		ttl, err := client.PTTL(ctx, keys[0]).Result()
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := tc.atLeast, tc.atMost
		if hi == 0 {
			// Counted from the Take's instant, at most elapsed before the
			// PTTL; Redis counts a PX from its current millisecond.
			elapsed := time.Since(start)
			lo, hi = d[0].ResetAfter-elapsed, (d[0].ResetAfter+time.Millisecond-1).Truncate(time.Millisecond)+time.Millisecond
		}
		if ttl < lo || ttl > hi {
			t.Errorf("%s: the key expires in %v, want between %v and %v (ResetAfter %v)", tc.name, ttl, lo, hi, d[0].ResetAfter)
		}
	}
}
