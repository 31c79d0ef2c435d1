package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestRefundLastPlaceWithinHalfASpacing checks the bound doc.go gives
// ("exact for queues whose spacing W/L is longer than twice a round
// trip"), which Store.Refund's comment gave as one round trip. The caller
// reckons its remaining wait from its own clock; the store decides later,
// a round trip at most, so the caller's remaining wait is too long by up
// to that much, and a place with a request queued behind it is taken for
// the last once the excess reaches half a spacing. A queue of 10 per
// second (spacing 100 ms) takes three places at t0; the second, which the
// third queued behind, is refunded with waited 0 while the store's clock
// has moved on by δ. At δ = 49 ms it is kept; at δ = 60 ms, within one
// spacing but past half of one, it is given back though a request queued
// behind it, in the memory store as in Redis.
func TestRefundLastPlaceWithinHalfASpacing(t *testing.T) {
	ctx := context.Background()
	client := newClient(t)
	spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: time.Second, MaxDelay: time.Second}
	c := algorithms.Check{Spec: spec, Key: "q"}
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		skew  time.Duration
		given bool
	}{{49 * time.Millisecond, false}, {60 * time.Millisecond, true}} {
		clk := &manualClock{t: t0}
		mem, rs := pairedStores(t, client, clk)
		for _, st := range []algorithms.Refunder{mem, rs} {
			clk.t = t0
			var second []algorithms.Decision
			for i := range 3 {
				d, err := st.Take(ctx, c)
				if err != nil || d[0].Delay != time.Duration(i)*100*time.Millisecond {
					t.Fatalf("%T: place %d = %+v, %v; want a Delay of %dms", st, i, d, err, i*100)
				}
				if i == 1 {
					second = d
				}
			}
			clk.t = t0.Add(tc.skew)
			dst := make([]algorithms.Refunded, 1)
			if err := st.Refund(ctx, dst, []algorithms.Check{c}, second, 0); err != nil {
				t.Fatal(err)
			}
			if dst[0].Given != tc.given {
				t.Errorf("%T: the second of three places, the caller's wait %v too long on a spacing of 100ms: Given %v, want %v", st, tc.skew, dst[0].Given, tc.given)
			}
		}
	}
}
