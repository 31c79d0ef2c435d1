package timing

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// expiringCtx is a request context with a server-side deadline that runs
// out when the test closes expired, not on a timer: an
// http.TimeoutHandler of an hour inside it times out then
// (context.DeadlineExceeded), the deadline being the earlier.
type expiringCtx struct {
	context.Context
	expired chan struct{}
}

func (c *expiringCtx) Deadline() (time.Time, bool) { return time.Now().Add(time.Minute), true }
func (c *expiringCtx) Done() <-chan struct{}       { return c.expired }
func (c *expiringCtx) Err() error {
	select {
	case <-c.expired:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// calls is a Tracker that records its calls, with each latency, safe for
// the goroutines of a handler that outlives its request.
type calls struct {
	mu  sync.Mutex
	got []string
	n   int
}

func (c *calls) add(call string, dn int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, call)
	c.n += dn
}

func (c *calls) Observe(latency time.Duration, status int) {
	c.add(fmt.Sprintf("observe %d/%v", status, latency), 0)
}

func (c *calls) Begin() interface{ End() } {
	c.add("begin", 1)
	return callsSpan{c}
}

func (c *calls) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprintf("%s (in flight %d)", strings.Join(c.got, " "), c.n)
}

type callsSpan struct{ c *calls }

func (s callsSpan) End() { s.c.add("end", -1) }

// TestServeTimeoutHandlerInside: next is an http.TimeoutHandler, which runs
// its handler on a goroutine of its own, into a buffer, and copies the
// buffer to the client once the handler returned, or answers 503 when its
// deadline runs out first. Its handler's writes into the buffer wait on
// no client: they are its own time, rightly. What waits on the client is
// the handler's reads of the body (on the request's wrapped Body, which
// the TimeoutHandler passes on) and the TimeoutHandler's copy of the
// buffer, or its 503: taken off. A timeout while the handler works of its
// own is the service's 503, at its own time; the handler, still running
// after it, is no longer in flight, and tells the Tracker nothing. A
// timeout the client runs out by trickling its upload is the
// TimeoutHandler's 503 as well, reported as the service's failure:
// Serve sees only the status of a timeout inside it, not why it ran out
// (the package documentation of middleware/adaptive says so, and bounds
// it with the server's ReadTimeout).
func TestServeTimeoutHandlerInside(t *testing.T) {
	for _, tc := range []struct {
		name string
		// handler is the TimeoutHandler's; when timeout is set, the
		// test makes its deadline run out once it works (working) or
		// waits on the body, and lets it go on once Serve returned.
		handler func(clock *algotest.Clock, working chan<- struct{}, finish <-chan struct{}, w http.ResponseWriter, r *http.Request)
		timeout bool
		want    string
	}{
		{"answered in time", func(clock *algotest.Clock, _ chan<- struct{}, _ <-chan struct{}, w http.ResponseWriter, r *http.Request) {
			clock.Advance(7 * time.Millisecond)
			io.Copy(io.Discard, r.Body) // 10 s, the client's
			for range 3 {
				clock.Advance(time.Millisecond) // rendering, its own
				w.Write([]byte("chunk"))        // into the buffer
			}
		}, false, "begin end begin end begin end begin observe 200/10ms end (in flight 0)"},
		{"timed out while working", func(clock *algotest.Clock, working chan<- struct{}, finish <-chan struct{}, w http.ResponseWriter, r *http.Request) {
			clock.Advance(7 * time.Millisecond)
			working <- struct{}{}
			<-finish                    // the service stuck past the deadline
			io.Copy(io.Discard, r.Body) // after its request is over
			w.Write([]byte("late"))
		}, true, "begin end begin observe 503/37ms end (in flight 0)"},
		{"timed out by a client trickling its upload", func(clock *algotest.Clock, working chan<- struct{}, finish <-chan struct{}, w http.ResponseWriter, r *http.Request) {
			clock.Advance(7 * time.Millisecond)
			var b [8]byte
			r.Body.Read(b[:]) // the test's gate: trickled past the deadline
		}, true, "begin end observe 503/7ms (in flight 0)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
			tr := &calls{}
			read := newGate()
			working, finish, handled := make(chan struct{}), make(chan struct{}), make(chan struct{})
			ctx := &expiringCtx{Context: context.Background(), expired: make(chan struct{})}
			r := httptest.NewRequest("POST", "/", nil).WithContext(ctx)
			body := &slowBody{Reader: strings.NewReader("an upload"), clock: clock, lag: 10 * time.Second}
			if strings.Contains(tc.name, "trickling") {
				r.Body = &gatedBody{g: read}
			} else {
				r.Body = body
			}
			th := http.TimeoutHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer close(handled)
				tc.handler(clock, working, finish, w, r)
			}), time.Hour, "timed out")
			served := make(chan struct{})
			go func() {
				defer close(served)
				Serve(&slowWriter{clock: clock, lag: 10 * time.Second}, r, th, clock, tr)
			}()
			if tc.timeout {
				if strings.Contains(tc.name, "trickling") {
					<-read.in // the handler waits on its client from 7ms
				} else {
					<-working // the handler works of its own from 7ms
				}
				clock.Advance(30 * time.Millisecond)
				close(ctx.expired)
				<-served
				// The handler goes on after its request is over.
				if strings.Contains(tc.name, "trickling") {
					read.out <- struct{}{}
				}
				close(finish)
			} else {
				<-served
			}
			<-handled
			if got := tr.String(); got != tc.want {
				t.Errorf("calls %q, want %q", got, tc.want)
			}
		})
	}
}
