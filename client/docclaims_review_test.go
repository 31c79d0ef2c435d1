package client_test

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// lockFreeClock is a Clock that takes no lock: its time stands still and
// its Sleep returns at once. Callers sharing it have no synchronisation
// through it, so the race detector sees what the Transport itself leaves
// unguarded.
type lockFreeClock struct{}

func (lockFreeClock) Now() time.Time                                   { return t0 }
func (lockFreeClock) Sleep(ctx context.Context, _ time.Duration) error { return ctx.Err() }

// WithRandom's doc: "The Transport serialises its calls to src." A
// math/rand/v2 PCG is not safe for concurrent use; callers backing off at
// once through one Transport draw from it under the Transport's lock (run
// with -race: without the lock, this test reports a data race).
func TestRandomSourceSerialised(t *testing.T) {
	srv := newStub(t, newFakeClock(), refuse(1<<30, http.StatusTooManyRequests, nil))
	tr, err := client.New(nil, client.WithClock(lockFreeClock{}), client.WithRandom(rand.NewPCG(1, 2)),
		client.WithRetries(4), client.WithKey(func(*http.Request) string { return "" }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.CloseIdleConnections)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			r := call(context.Background(), tr, srv.URL, "")
			if r.err != nil || r.status != http.StatusTooManyRequests {
				t.Errorf("got %d %v, want the last 429", r.status, r.err)
			}
		})
	}
	hangguard.Run(t, time.Minute, "the 32 callers did not all return", wg.Wait)
	if got, want := len(srv.arrivals()), 32*5; got != want {
		t.Errorf("%d attempts, want %d", got, want)
	}
}

// closeCounter is an http.Transport that counts its CloseIdleConnections
// calls.
type closeCounter struct {
	*http.Transport
	mu     sync.Mutex
	closes int
}

func (c *closeCounter) CloseIdleConnections() {
	c.mu.Lock()
	c.closes++
	c.mu.Unlock()
	c.Transport.CloseIdleConnections()
}

// CloseIdleConnections' doc: it closes the idle connections of the next
// RoundTripper (http.Client.CloseIdleConnections calls it). The server sees
// the connection its one request left idle closed.
func TestCloseIdleConnectionsReachesTheNextRoundTripper(t *testing.T) {
	closed := make(chan struct{}, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			closed <- struct{}{}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	next := &closeCounter{Transport: &http.Transport{}}
	tr, err := client.New(next, client.WithClock(newAutoClock()))
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: tr}
	if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
		t.Fatalf("got %d %v", status, err)
	}
	hc.CloseIdleConnections()
	next.mu.Lock()
	closes := next.closes
	next.mu.Unlock()
	if closes != 1 {
		t.Fatalf("next.CloseIdleConnections called %d times, want 1", closes)
	}
	hangguard.Await(t, closed, 10*time.Second, "the idle connection was not closed")
}

// bodyRecorder is a RoundTripper that reads each request's body whole,
// records it, and sends a copy of the request with that body and no
// GetBody through next: net/http's Transport, which rewinds a body through
// GetBody on its own when a write fails, cannot hide a retry sent with a
// body already read (a RoundTripper that is not net/http's would send it
// empty).
type bodyRecorder struct {
	next   http.RoundTripper
	mu     sync.Mutex
	bodies []string
}

func (b *bodyRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	b.mu.Lock()
	b.bodies = append(b.bodies, string(body))
	b.mu.Unlock()
	out := r.Clone(r.Context())
	out.Body, out.GetBody, out.ContentLength = io.NopCloser(bytes.NewReader(body)), nil, int64(len(body))
	return b.next.RoundTrip(out)
}

// RoundTrip's doc: only requests whose body can be had again are retried,
// and a retry replays it through GetBody. Each attempt of a PUT refused
// twice reaches the next RoundTripper with the whole body.
func TestRetryReplaysTheBodyThroughGetBody(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, refuse(2, http.StatusTooManyRequests, func() string { return "1" }))
	rec := &bodyRecorder{next: http.DefaultTransport}
	tr, err := client.New(rec, client.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tr.CloseIdleConnections)
	req, _ := http.NewRequest(http.MethodPut, srv.URL, strings.NewReader("v=1"))
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	want := []string{"v=1", "v=1", "v=1"}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if !slices.Equal(rec.bodies, want) {
		t.Errorf("the next RoundTripper was given the bodies %q, want %q", rec.bodies, want)
	}
	if got := srv.received(); !slices.Equal(got, want) {
		t.Errorf("the server received %q, want %q", got, want)
	}
}
