package client_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// A *RetryError for the deadline ("retry would come after the context
// deadline") reads as a deadline whichever wait would have outlasted it:
// the server's Retry-After (the Transport gives up before it waits), or
// the retry's turn in the queue (its *WaitError is the RetryError's Err).
// Both match context.DeadlineExceeded with errors.Is, and both report a
// timeout through an http.Client's *url.Error, as the *WaitError of a
// first attempt does; before, only the second did the first, and neither
// the second.
func TestRetryErrorForTheDeadlineIsATimeout(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []client.Option
		ra   string
	}{
		{"Retry-After past the deadline", nil, "30"},
		{"retry's turn past the deadline", []client.Option{client.WithRate(1, time.Hour), client.WithMaxWait(10 * time.Hour),
			client.WithRandom(zeroSource{})}, "0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			srv := newStub(t, clock, refuse(1, http.StatusTooManyRequests, func() string { return tc.ra }))
			hc, _ := newClient(t, clock, append(tc.opts, client.WithGiveUpError())...)
			var err error
			clock.drive(t, 1, func(int) { _, err = doWithin(hc, srv.URL, 10*time.Second) })
			var re *client.RetryError
			if !errors.As(err, &re) || re.Reason != "retry would come after the context deadline" {
				t.Fatalf("error %v, want a *RetryError for the deadline", err)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("errors.Is(%v, context.DeadlineExceeded) = false, want true", err)
			}
			if !errors.Is(err, client.ErrGaveUp) {
				t.Errorf("errors.Is(%v, ErrGaveUp) = false, want true", err)
			}
			var ne interface{ Timeout() bool }
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Errorf("%v does not report a timeout", err)
			}
		})
	}
}
