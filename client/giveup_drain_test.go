package client_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/ratekeeper/ratekeeper/client"
)

// TestGiveUpErrorDrainsTheLastBody: with WithGiveUpError, the last
// refusal's body, which the caller never sees, is read to its end before
// it is closed, so its connection goes back to the pool: the next request
// reuses it (one connection for both). A body closed unread would cost the
// next request a new connection.
func TestGiveUpErrorDrainsTheLastBody(t *testing.T) {
	srv := newConnServer(t, 1, 1<<10)
	next := &http.Transport{}
	t.Cleanup(next.CloseIdleConnections)
	tr, err := client.New(next, client.WithClock(newAutoClock()), client.WithRetries(0), client.WithGiveUpError())
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: tr}
	var re *client.RetryError
	if _, err := c.Get(srv.URL); !errors.As(err, &re) || re.LastStatus != http.StatusTooManyRequests {
		t.Fatalf("first request: %v, want a *RetryError after a 429", err)
	}
	if status, body, err := get(c, srv.URL); err != nil || status != 200 || body != "ok" {
		t.Fatalf("second request: %d %q %v", status, body, err)
	}
	if got := srv.conns.Load(); got != 1 {
		t.Errorf("%d connections for the two requests, want 1", got)
	}
}
