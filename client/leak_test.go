package client_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// connServer is a test server that counts the connections it accepts and
// answers 429 (with a body of size bytes) to its first refusals requests.
type connServer struct {
	*httptest.Server
	conns    atomic.Int64
	requests atomic.Int64
}

func newConnServer(t *testing.T, refusals int, size int) *connServer {
	t.Helper()
	s := &connServer{}
	body := strings.Repeat("x", size)
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.requests.Add(1) <= int64(refusals) {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, body)
			return
		}
		io.WriteString(w, "ok")
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// The bodies of the refused attempts are read to their end before the
// retry, so the connection goes back to the pool: four attempts, one
// connection. A body longer than the drain limit is closed unread (reading
// megabytes to save a handshake is no bargain), which costs a connection
// per attempt: the control shows the count would notice a leak.
func TestRetriesReuseTheConnection(t *testing.T) {
	for _, tc := range []struct {
		name      string
		size      int
		wantConns int64
	}{
		{"small bodies drained", 1 << 10, 1},
		{"huge bodies closed", 1 << 20, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newConnServer(t, 3, tc.size)
			next := &http.Transport{}
			t.Cleanup(next.CloseIdleConnections)
			tr, err := client.New(next, client.WithClock(newAutoClock()))
			if err != nil {
				t.Fatal(err)
			}
			status, body, err := get(&http.Client{Transport: tr}, srv.URL)
			if err != nil || status != 200 || body != "ok" {
				t.Fatalf("got %d %q %v", status, body, err)
			}
			if got := srv.requests.Load(); got != 4 {
				t.Errorf("%d attempts, want 4", got)
			}
			if got := srv.conns.Load(); got != tc.wantConns {
				t.Errorf("%d connections for 4 attempts, want %d", got, tc.wantConns)
			}
		})
	}
}

// A POST answered 503 without Retry-After is not retried (it may have been
// acted on, and its method is not idempotent): the 503 comes back as it is,
// body unread, or as a *RetryError saying 1 attempt, status 503, no
// Retry-After, with the body closed.
func TestPost503WithoutRetryAfter(t *testing.T) {
	for _, giveUpError := range []bool{false, true} {
		clock := newAutoClock()
		srv := newStub(t, clock, refuse(100, http.StatusServiceUnavailable, nil))
		tracker := &closeTracker{next: http.DefaultTransport}
		opts := []client.Option{client.WithClock(clock)}
		if giveUpError {
			opts = append(opts, client.WithGiveUpError())
		}
		tr, err := client.New(tracker, opts...)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := (&http.Client{Transport: tr}).Post(srv.URL, "text/plain", strings.NewReader("order=1"))
		if giveUpError {
			var re *client.RetryError
			if resp != nil || !errors.As(err, &re) ||
				*re != (client.RetryError{Attempts: 1, LastStatus: 503, Reason: "request cannot be replayed"}) {
				t.Errorf("WithGiveUpError: got %v, %v; want a *RetryError after 1 attempt, 503", resp, err)
			}
		} else {
			if err != nil || resp.StatusCode != 503 {
				t.Fatalf("got %v, %v; want the 503", resp, err)
			}
			if b, _ := io.ReadAll(resp.Body); string(b) != "slow down" {
				t.Errorf("body %q, want it unread", b)
			}
			resp.Body.Close()
		}
		if got := srv.received(); len(got) != 1 || got[0] != "order=1" {
			t.Errorf("giveUpError %v: the stub received %q, want the POST once", giveUpError, got)
		}
		if opened, closed := tracker.counts(); opened != 1 || closed != 1 {
			t.Errorf("giveUpError %v: %d bodies opened, %d closed", giveUpError, opened, closed)
		}
		if got := clock.Sleeps(); len(got) != 0 {
			t.Errorf("giveUpError %v: slept %v", giveUpError, got)
		}
	}
}

// notifyClock is the system clock that tells, on sleeping, that it sleeps.
type notifyClock struct{ sleeping chan struct{} }

func (c notifyClock) Now() time.Time { return client.SystemClock.Now() }

func (c notifyClock) Sleep(ctx context.Context, d time.Duration) error {
	c.sleeping <- struct{}{}
	return client.SystemClock.Sleep(ctx, d)
}

// With the system clock, callers waiting for their turn, for a server's
// hold and between retries — for half an hour or more — all return at once
// when their contexts are cancelled, and the Transport leaves no goroutine
// behind (it starts none: every wait is on the caller's goroutine).
func TestCancelledWaitsLeaveNoGoroutine(t *testing.T) {
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host == "refuse.example" {
			return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"1800"}}, Body: http.NoBody, Request: r}, nil
		}
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	clock := notifyClock{sleeping: make(chan struct{}, 100)}
	tr, err := client.New(next, client.WithClock(clock), client.WithRate(100, time.Hour),
		client.WithMaxWait(time.Hour), client.WithMaxRetryAfter(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 50
	var wg sync.WaitGroup
	var cancelled atomic.Int64
	for i := range n {
		host := "queue.example"
		if i%2 == 1 {
			host = "refuse.example"
		}
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/", nil)
			resp, err := tr.RoundTrip(req)
			if resp != nil {
				resp.Body.Close()
			}
			if errors.Is(err, context.Canceled) {
				cancelled.Add(1)
			}
		})
	}
	// Every caller but the first to queue.example (sent at once) sleeps
	// once: for its turn 36s apart, for the hold refuse.example asked for,
	// or before its retry.
	for range n - 1 {
		hangguard.Await(t, clock.sleeping, 10*time.Second, "callers did not all start waiting")
	}
	cancel()
	hangguard.Run(t, 10*time.Second, "the callers did not all return once cancelled", wg.Wait)
	if got := cancelled.Load(); got != n-1 {
		t.Errorf("%d callers saw context.Canceled, want %d", got, n-1)
	}
	// No goroutine is left anywhere in the Transport. (Counting goroutines
	// would not do: a caller's goroutine may still be exiting after Done.)
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	for _, g := range strings.Split(stacks, "\n\n") {
		if strings.Contains(g, "ratekeeper/client.") && !strings.Contains(g, "client_test.TestCancelledWaitsLeaveNoGoroutine(") {
			t.Errorf("a goroutine is left in the Transport:\n%s", g)
		}
	}
}
