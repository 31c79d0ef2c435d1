package middleware_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestQueueDeadlineDuringHoldRetryAfter: a held request whose context's
// deadline ends the hold (its turn was within the deadline when it was
// decided, but the wait ran late) is answered 503 with a Retry-After, as
// one refused at once for its deadline is: the time left to its turn,
// at least 1 s. It had none. A request whose client went away still gets
// none (no one reads it).
func TestQueueDeadlineDuringHoldRetryAfter(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{context.DeadlineExceeded, "5"}, // held 5 s of its 10 s
		{context.Canceled, ""},
	} {
		store, clock := newStore(t)
		m := middleware.MustNew(store, []*policy.Policy{queue10s()}, middleware.WithClock(clock),
			middleware.WithWait(func(ctx context.Context, d time.Duration) error {
				clock.Advance(d / 2)
				return tt.err
			}))
		h := m.Handler(ok)
		serve(h, "GET", "/") // departs at once
		w := serve(h, "GET", "/")
		if w.Code != http.StatusServiceUnavailable {
			t.Fatalf("%v while held: %d, want 503", tt.err, w.Code)
		}
		if got := w.Header().Get("Retry-After"); got != tt.want {
			t.Errorf("%v while held: Retry-After %q, want %q", tt.err, got, tt.want)
		}
	}
}
