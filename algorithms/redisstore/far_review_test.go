package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestStateAheadThresholds checks doc.go's "Clocks that go back": after
// one request on a 24 h spec, an injected clock steps back. 21 days back
// (every state at most 22 days ahead, within both thresholds) Redis decides
// as the memory store does, which keeps the state; 30 days back (past both:
// 2^51 ns, 26 days, for the window kinds; a stored instant 2·10^6 s, 23
// days, away for the bucket kinds and sliding_log) Redis treats the state
// as expired and decides as a fresh memory store.
func TestStateAheadThresholds(t *testing.T) {
	ctx := context.Background()
	client := newClient(t)
	for _, k := range algorithms.Kinds {
		spec := algorithms.Spec{Algorithm: k, Limit: 1, Window: 24 * time.Hour}
		if k == algorithms.SlidingBuckets {
			spec.Buckets = 4
		}
		c := algorithms.Check{Spec: spec, Key: "k"}
		for _, back := range []time.Duration{21 * 24 * time.Hour, 30 * 24 * time.Hour} {
			clk := &manualClock{t: time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)}
			mem, rs := pairedStores(t, client, clk)
			for _, st := range []algorithms.Store{mem, rs} {
				if d, err := st.Take(ctx, c); err != nil || !d[0].Allowed {
					t.Fatalf("%s: first request = %+v, %v", k, d, err)
				}
			}
			clk.t = clk.t.Add(-back)
			ref := algorithms.Store(mem)
			if back > 26*24*time.Hour {
				fresh, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
				if err != nil {
					t.Fatal(err)
				}
				ref = fresh
			}
			want, err := ref.Take(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			got, err := rs.Take(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if got[0] != want[0] {
				t.Errorf("%s, %v back: redis %+v, want %+v", k, back, got[0], want[0])
			}
		}
	}
}
