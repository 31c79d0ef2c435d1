package client_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// stub is a test server that records the virtual instant (offset from t0)
// and body of every request it receives and answers with respond.
type stub struct {
	*httptest.Server
	clock   *fakeClock
	mu      sync.Mutex
	at      []time.Duration
	bodies  []string
	respond func(n int, w http.ResponseWriter, r *http.Request) // n counts from 1
}

func newStub(t *testing.T, clock *fakeClock, respond func(n int, w http.ResponseWriter, r *http.Request)) *stub {
	t.Helper()
	s := &stub{clock: clock, respond: respond}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.at = append(s.at, clock.Now().Sub(t0))
		s.bodies = append(s.bodies, string(body))
		n := len(s.at)
		s.mu.Unlock()
		// The stub's clock is the fake one: its Date says so, as a real
		// server's says its own (see TestAbsoluteTimesFollowTheServersDate).
		w.Header().Set("Date", clock.Now().UTC().Format(http.TimeFormat))
		if s.respond == nil {
			io.WriteString(w, "ok")
			return
		}
		s.respond(n, w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// arrivals returns the recorded instants, in arrival order.
func (s *stub) arrivals() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.at...)
}

func (s *stub) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.bodies...)
}

// newClient returns an http.Client over a Transport built with opts and the
// given clock, failing the test on a construction error.
func newClient(t *testing.T, clock client.Clock, opts ...client.Option) (*http.Client, *client.Transport) {
	t.Helper()
	tr, err := client.New(nil, append([]client.Option{client.WithClock(clock)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}, tr
}

// roundTrip sends a GET to url through tr with ctx, the caller named in an
// X-Caller header unless caller is empty, and returns RoundTrip's error (it
// closes the response's body).
func roundTrip(ctx context.Context, tr http.RoundTripper, url, caller string) error {
	r, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if caller != "" {
		r.Header.Set("X-Caller", caller)
	}
	resp, err := tr.RoundTrip(r)
	if err == nil {
		resp.Body.Close()
	}
	return err
}

// get sends a GET and returns the status and body, or the error.
func get(hc *http.Client, url string) (int, string, error) {
	resp, err := hc.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// closeTracker wraps a RoundTripper and counts the response bodies closed.
type closeTracker struct {
	next   http.RoundTripper
	mu     sync.Mutex
	opened int
	closed int
}

func (c *closeTracker) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.opened++
	c.mu.Unlock()
	resp.Body = &trackedBody{ReadCloser: resp.Body, c: c}
	return resp, nil
}

func (c *closeTracker) counts() (opened, closed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opened, c.closed
}

type trackedBody struct {
	io.ReadCloser
	c    *closeTracker
	once sync.Once
}

func (b *trackedBody) Close() error {
	b.once.Do(func() {
		b.c.mu.Lock()
		b.c.closed++
		b.c.mu.Unlock()
	})
	return b.ReadCloser.Close()
}
