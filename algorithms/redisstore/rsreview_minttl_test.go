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
		atMost  time.Duration
	}{
		{"clock alone", []redisstore.Option{redisstore.WithClock(clk)}, redisstore.DefaultClockTTL - time.Minute, redisstore.DefaultClockTTL + time.Second},
		{"clock then min 0", []redisstore.Option{redisstore.WithClock(clk), redisstore.WithMinTTL(0)}, 0, 1100 * time.Millisecond},
		{"min 0 then clock", []redisstore.Option{redisstore.WithMinTTL(0), redisstore.WithClock(clk)}, 0, 1100 * time.Millisecond},
		{"clock then min 2h", []redisstore.Option{redisstore.WithClock(clk), redisstore.WithMinTTL(2 * time.Hour)}, 2*time.Hour - time.Minute, 2*time.Hour + time.Second},
		{"min 2h then clock", []redisstore.Option{redisstore.WithMinTTL(2 * time.Hour), redisstore.WithClock(clk)}, 2*time.Hour - time.Minute, 2*time.Hour + time.Second},
	} {
		prefix := uniquePrefix(t)
		s, err := redisstore.New(client, append(tc.opts, redisstore.WithPrefix(prefix))...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "k"}); err != nil {
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
		if ttl < tc.atLeast || ttl > tc.atMost {
			t.Errorf("%s: the key expires in %v, want between %v and %v", tc.name, ttl, tc.atLeast, tc.atMost)
		}
	}
}
