package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// readBody is a request body that counts the bytes read from it.
type readBody struct {
	r    io.Reader
	read *atomic.Int32
}

func (b readBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read.Add(int32(n))
	return n, err
}

func (b readBody) Close() error { return nil }

// The first attempt sends the caller's own request body; GetBody is for
// the retries only. A request answered at once has its body read and sent
// once. (net/http closes a sent body asynchronously: its Close is not
// counted here.)
func TestFirstAttemptSendsTheCallersBody(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, nil)
	_, tr := newClient(t, clock)
	var read, fresh atomic.Int32
	req, _ := http.NewRequest(http.MethodPut, srv.URL, nil)
	req.Body = readBody{strings.NewReader("v=1"), &read}
	req.ContentLength = 3
	req.GetBody = func() (io.ReadCloser, error) {
		fresh.Add(1)
		return io.NopCloser(strings.NewReader("v=1")), nil
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := srv.received(); len(got) != 1 || got[0] != "v=1" {
		t.Errorf("received %q, want the body once", got)
	}
	if n := read.Load(); n != 3 {
		t.Errorf("%d bytes read from the caller's body, want its 3", n)
	}
	if n := fresh.Load(); n != 0 {
		t.Errorf("GetBody called %d times for a request sent once, want 0", n)
	}
}

// With WithGiveUpError too, a first attempt whose turn is too far away
// fails with the *WaitError, before anything is sent: it gave up on no
// retry, so it is no *RetryError.
func TestFirstAttemptTooLongIsAWaitErrorWithGiveUpError(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, nil)
	_, tr := newClient(t, clock, client.WithRate(1, 10*time.Second), client.WithMaxWait(time.Second), client.WithGiveUpError())
	if err := roundTrip(context.Background(), tr, srv.URL, ""); err != nil {
		t.Fatal(err)
	}
	err := roundTrip(context.Background(), tr, srv.URL, "")
	var we *client.WaitError
	if !errors.As(err, &we) || errors.Is(err, client.ErrGaveUp) {
		t.Errorf("second request: %v, want a *WaitError and no give-up", err)
	}
	if got := len(srv.arrivals()); got != 1 {
		t.Errorf("%d requests sent, want 1", got)
	}
}
