package middleware

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestRefundedDecisionMatchesQueue compares refundedDecision with the
// memory store on random leaky_queues: for a request of cost n admitted
// with a Delay, the decision with its place given back must be the state
// the queue was in when it came, as a Take that does not consume (denied
// by another check) reports it. ResetAfter is exact; Remaining is exact,
// or one too low on a boundary the Delay's rounding hides; NextAfter is
// exact, or up to a nanosecond late. Never above, never early.
func TestRefundedDecisionMatchesQueue(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	t0 := time.Unix(1_700_000_000, 0)
	windows := []time.Duration{time.Millisecond, 7 * time.Millisecond, time.Second, 3 * time.Second, 10 * time.Second, time.Minute, 1000003}
	block := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}
	checked := 0
	for range 3000 {
		w := windows[rng.IntN(len(windows))]
		spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1 + rng.Int64N(7), Window: w,
			MaxDelay: time.Duration(rng.Int64N(int64(8 * w)))}
		capacity := spec.Capacity()
		clock := algotest.NewClock(t0)
		store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		// Fill the queue part way, with time passing between requests.
		for range rng.IntN(int(capacity) + 2) {
			if _, err := store.Take(ctx, algorithms.Check{Spec: spec, Key: "q", Cost: 1 + rng.Int64N(capacity)}); err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Duration(rng.Int64N(int64(w))))
		}
		// The state as it is: the queue's check passes, the other denies.
		if _, err := store.Take(ctx, algorithms.Check{Spec: block, Key: "b"}); err != nil {
			t.Fatal(err)
		}
		ds, err := store.Take(ctx, algorithms.Check{Spec: spec, Key: "q"}, algorithms.Check{Spec: block, Key: "b"})
		if err != nil {
			t.Fatal(err)
		}
		before := ds[0]
		n := 1 + rng.Int64N(capacity)
		ds, err = store.Take(ctx, algorithms.Check{Spec: spec, Key: "q", Cost: n})
		if err != nil {
			t.Fatal(err)
		}
		if !ds[0].Allowed {
			continue
		}
		checked++
		got := refundedDecision(ds[0], spec, n)
		if got.ResetAfter != before.ResetAfter || got.Remaining > before.Remaining || got.Remaining < before.Remaining-1 ||
			got.NextAfter < before.NextAfter || got.NextAfter > before.NextAfter+1 || got.Limit != before.Limit {
			t.Fatalf("%s, cost %d: decision %+v refunded to %+v; the queue was %+v", spec, n, ds[0], got, before)
		}
		if got.Remaining != before.Remaining && ds[0].Remaining != 0 {
			t.Fatalf("%s, cost %d: decision %+v refunded to %+v; Remaining above 0 gives back exactly, the queue was %+v", spec, n, ds[0], got, before)
		}
		store.Close()
	}
	if checked < 1000 {
		t.Errorf("only %d admitted requests checked", checked)
	}
}
