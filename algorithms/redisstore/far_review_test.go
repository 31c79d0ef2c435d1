package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestStateAheadUnder26DaysKept: doc.go ("Clocks that go back") says only
// a state more than 2^51 ns (26 days) ahead of the instant is treated as
// expired. Here an injected clock steps back 24 days after one request on
// a 24 h spec, so every kind's state is 24 to 26 days ahead: Redis must
// decide as the memory store does (denied, with the lengthened waits).
// The bucket kinds and sliding_log read a stored instant more than 2·10^6 s
// (23.1 days) from t as expired (lua/num.lua far, used by cell.lua's
// loadBucket and log.lua's logEvent), so they admit.
func TestStateAheadUnder26DaysKept(t *testing.T) {
	t.Skip("bug (doc.go vs lua/num.lua far): bucket kinds and sliding_log treat a state more than 2e6 s (23.1 days) ahead " +
		"as expired, not 2^51 ns (26 days) as doc.go says: 24 days back, token_bucket admits where memory denies")
	ctx := context.Background()
	for _, k := range algorithms.Kinds {
		clk := &manualClock{t: time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)}
		mem, rs := pairedStores(t, newClient(t), clk)
		spec := algorithms.Spec{Algorithm: k, Limit: 1, Window: 24 * time.Hour}
		if k == algorithms.SlidingBuckets {
			spec.Buckets = 4
		}
		c := algorithms.Check{Spec: spec, Key: "k"}
		for _, st := range []algorithms.Store{mem, rs} {
			if d, err := st.Take(ctx, c); err != nil || !d[0].Allowed {
				t.Fatalf("%s: first request = %+v, %v", k, d, err)
			}
		}
		clk.t = clk.t.Add(-24 * 24 * time.Hour)
		want, err := mem.Take(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rs.Take(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != want[0] {
			t.Errorf("%s, 24 days back: redis %+v, memory %+v", k, got[0], want[0])
		}
	}
}
