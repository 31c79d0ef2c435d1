package redisstore_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestHugeMinTTL: WithMinTTL accepts any non-negative duration, and the
// largest ones must still keep keys at least that long (in whole
// milliseconds, rounded up), not be ignored. Rounding d up to milliseconds
// as (d + 999999) / 10^6 overflowed for d near math.MaxInt64, sending a
// negative minimum that the script ignored: keys expired at their
// ResetAfter, and with an injected clock that Redis does not follow, state
// that still mattered was lost.
func TestHugeMinTTL(t *testing.T) {
	ctx := context.Background()
	client := newClient(t)
	for _, d := range []time.Duration{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 - 999_999} {
		prefix := uniquePrefix(t)
		store, err := redisstore.New(client, redisstore.WithPrefix(prefix), redisstore.WithMinTTL(d))
		if err != nil {
			t.Fatal(err)
		}
		spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Second}
		if _, err := store.Take(ctx, algorithms.Check{Spec: spec, Key: "k"}); err != nil {
			t.Fatalf("MinTTL %d: Take: %v", d, err)
		}
		keys := keysUnder(t, client, prefix)
		if len(keys) != 1 {
			t.Fatalf("MinTTL %d: keys %v, want one", d, keys)
		}
		// PTTL in milliseconds as Redis replies it (go-redis's Duration
		// would overflow); allow a second of test time.
		pttl, err := client.Do(ctx, "PTTL", keys[0]).Int64()
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(d/time.Millisecond) - 1000; pttl < want {
			t.Errorf("MinTTL %d: key expires in %d ms, want at least %d ms", d, pttl, want)
		}
	}
}
