package middleware_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestQueueCutShortKeptPlaceHeaders: a held request whose client goes
// away after a later request queued behind it keeps its place (the
// Refunder's rule); the headers of its 503 report the queue as the store
// has it after the refund, both places counted, not as if its place had
// come back. The values are checked against a Take at the same instant.
func TestQueueCutShortKeptPlaceHeaders(t *testing.T) {
	for _, tt := range []struct {
		profile middleware.Profile
		want    map[string]string
	}{
		// At t0 one departs at once, A is held for its turn at 10 s and B
		// queues behind it (20 s). A's client leaves 5 s in: its place is
		// kept, the queue free 25 s later, 4 more fit (not 6), the next
		// in 5 s.
		{middleware.IETF, map[string]string{"RateLimit": `"queue";r=4;t=5`}},
		{middleware.Draft7, map[string]string{"RateLimit": "limit=7, remaining=4, reset=25"}},
		{middleware.Legacy, map[string]string{"X-RateLimit-Remaining": "4", "X-RateLimit-Reset": "25"}},
	} {
		t.Run(tt.profile.String(), func(t *testing.T) {
			store, clock := newStore(t)
			var h http.Handler
			holds := 0
			var queuedBehind int
			m := middleware.MustNew(store, []*policy.Policy{queue10s()}, middleware.WithHeaders(tt.profile), middleware.WithClock(clock),
				middleware.WithWait(func(ctx context.Context, d time.Duration) error {
					holds++
					if holds > 1 {
						return nil // B: served after its hold, on no clock
					}
					// A: B arrives while A is held, then A's client leaves.
					queuedBehind = serve(h, "GET", "/").Code
					clock.Advance(d / 2)
					return context.Canceled
				}))
			h = m.Handler(ok)
			serve(h, "GET", "/") // departs at once
			w := serve(h, "GET", "/")
			if w.Code != http.StatusServiceUnavailable || queuedBehind != http.StatusOK {
				t.Fatalf("A (client gone while held): %d, want 503; B queued behind it: %d, want 200", w.Code, queuedBehind)
			}
			for k, v := range tt.want {
				if got := w.Header().Get(k); got != v {
					t.Errorf("%s %q, want %q", k, got, v)
				}
			}
			// What the headers say is what the queue holds: one more
			// request leaves one less.
			ds, err := store.Take(context.Background(), algorithms.Check{Spec: queue10s().Spec(), Key: "queue:192.0.2.1:1234"})
			if err != nil {
				t.Fatal(err)
			}
			if ds[0].Remaining != 3 {
				t.Errorf("the queue then admitted one, leaving %d; want 3 (r 4 less one)", ds[0].Remaining)
			}
		})
	}
}
