package timing

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// The tests of this file force an order on the goroutines of one request
// (its handler's, and one reading its body) with channels, on a clock only
// the test moves, to show how Serve counts waits on the client that
// overlap or end as the handler returns.

// gate is one operation on the client the test lets through: it sends on
// in as it begins, and ends when out receives.
type gate struct{ in, out chan struct{} }

func newGate() gate { return gate{make(chan struct{}), make(chan struct{})} }

func (g gate) pass() {
	g.in <- struct{}{}
	<-g.out
}

// gatedWriter is a writer to a client whose every Write passes g. It has
// none of the optional interfaces: Serve's handler writes to its
// *statusWriter itself.
type gatedWriter struct {
	h http.Header
	g gate
}

func (w *gatedWriter) Header() http.Header {
	if w.h == nil {
		w.h = http.Header{}
	}
	return w.h
}

func (w *gatedWriter) WriteHeader(int) {}

func (w *gatedWriter) Write(b []byte) (int, error) {
	w.g.pass()
	return len(b), nil
}

// gatedBody is a request body whose every Read passes g.
type gatedBody struct{ g gate }

func (b *gatedBody) Read([]byte) (int, error) {
	b.g.pass()
	return 0, io.EOF
}

func (b *gatedBody) Close() error { return nil }

// holdable holds one call the test arms: the next call that finds the
// request's lock free (the caller does not hold it) sends on held and
// goes on when release receives. A call made with the lock held is not
// held: it is ordered with everything the lock orders, and holding it
// would hold every other goroutine of the request.
type holdable struct {
	armed         atomic.Bool
	lock          atomic.Pointer[sync.Mutex] // the request's statusWriter's
	held, release chan struct{}
}

func newHoldable() holdable {
	return holdable{held: make(chan struct{}), release: make(chan struct{})}
}

// hold holds the call it is called from, if armed and the lock is free.
func (h *holdable) hold() {
	if !h.armed.CompareAndSwap(true, false) {
		return
	}
	l := h.lock.Load()
	if !l.TryLock() {
		return
	}
	l.Unlock()
	h.held <- struct{}{}
	<-h.release
}

// heldClock is a test clock one reading of which can be held: the time
// is read, then held (see holdable), then returned.
type heldClock struct {
	*algotest.Clock
	holdable
}

func (c *heldClock) Now() time.Time {
	t := c.Clock.Now()
	c.hold()
	return t
}

// heldTracker is a Tracker that records its calls and one Begin of which
// can be held (see holdable) before it counts.
type heldTracker struct {
	holdable
	mu    sync.Mutex
	calls []string
	n     int // in flight
}

func (t *heldTracker) record(call string, dn int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.calls = append(t.calls, call)
	t.n += dn
}

func (t *heldTracker) Observe(_ time.Duration, status int) {
	t.record(fmt.Sprintf("observe %d", status), 0)
}

func (t *heldTracker) Begin() interface{ End() } {
	t.hold()
	t.record("begin", 1)
	return heldSpan{t}
}

type heldSpan struct{ t *heldTracker }

func (s heldSpan) End() { s.t.record("end", -1) }

// TestServeOverlappingWaitsTakenOffOnce: a handler writes to its client
// (from 7ms to 10.007s) while another of its goroutines reads the body
// (from 5.007s to 15.007s): it waited on its client from 7ms to 15.007s,
// and its own time is 10ms. Serve read the clock as a wait began before
// taking its lock: a read whose reading (5.007s) was taken before the
// write's end (10.007s), but counted after it, began a wait of its own
// from 5.007s, and the 5s both overlap were taken off twice (reported 0s).
func TestServeOverlappingWaitsTakenOffOnce(t *testing.T) {
	clock := &heldClock{Clock: algotest.NewClock(time.Unix(1_700_000_000, 0)), holdable: newHoldable()}
	write, read := newGate(), newGate()
	r := httptest.NewRequest("POST", "/", nil)
	r.Body = &gatedBody{g: read}
	rec := &recorder{}
	startRead, written, served := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(served)
		Serve(&gatedWriter{g: write}, r, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			clock.lock.Store(&w.(*statusWriter).mu)
			clock.Advance(7 * time.Millisecond)
			readDone := make(chan struct{})
			go func() {
				defer close(readDone)
				<-startRead
				var b [8]byte
				r.Body.Read(b[:])
			}()
			w.Write([]byte("early answer"))
			written <- struct{}{}
			<-readDone
			clock.Advance(3 * time.Millisecond)
		}), clock, rec)
	}()
	<-write.in // the write waits from 7ms
	clock.Advance(5 * time.Second)
	clock.armed.Store(true)
	close(startRead) // the read begins at 5.007s
	held := false
	select {
	case <-clock.held: // its reading held before it counts
		held = true
	case <-read.in: // its reading taken under the lock
	}
	clock.Advance(5 * time.Second)
	write.out <- struct{}{} // the write ends at 10.007s
	<-written
	if held {
		clock.release <- struct{}{}
		<-read.in
	}
	clock.Advance(5 * time.Second)
	read.out <- struct{}{} // the read ends at 15.007s
	<-served
	if got, want := fmt.Sprint(rec.got), "[200/10ms]"; got != want {
		t.Errorf("reported %s, want %s", got, want)
	}
}

// TestServeWaitEndingAsTheHandlerReturnsCountedToThen: a handler returns
// at 7ms while another of its goroutines still reads the body (from 7ms;
// the read ends at 10.007s, after the handler): the wait counts up to the
// handler's return, its own time is 7ms. Serve read the end's clock
// before taking its lock: a read that ended after that reading, but
// counted before it, was taken off whole, 10s from 7ms (reported 0s).
func TestServeWaitEndingAsTheHandlerReturnsCountedToThen(t *testing.T) {
	clock := &heldClock{Clock: algotest.NewClock(time.Unix(1_700_000_000, 0)), holdable: newHoldable()}
	read := newGate()
	r := httptest.NewRequest("POST", "/", nil)
	r.Body = &gatedBody{g: read}
	rec := &recorder{}
	ret, readDone, served := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(served)
		Serve(&gatedWriter{g: newGate()}, r, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			clock.lock.Store(&w.(*statusWriter).mu)
			clock.Advance(7 * time.Millisecond)
			go func() {
				defer close(readDone)
				var b [8]byte
				r.Body.Read(b[:])
			}()
			<-ret
		}), clock, rec)
	}()
	<-read.in // the read waits from 7ms
	clock.armed.Store(true)
	close(ret) // the handler returns at 7ms
	held := false
	select {
	case <-clock.held: // the end's reading held before it counts
		held = true
	case <-served: // the end's reading taken under the lock
	}
	clock.Advance(10 * time.Second)
	read.out <- struct{}{} // the read ends at 10.007s
	<-readDone
	if held {
		clock.release <- struct{}{}
		<-served
	}
	if got, want := fmt.Sprint(rec.got), "[200/7ms]"; got != want {
		t.Errorf("reported %s, want %s", got, want)
	}
}

// TestServeTrackerNothingAfterServeReturns: a handler returns as another
// of its goroutines ends a read of the body, which begins the request
// again for a Tracker. Whatever the order, the Tracker is told nothing
// once Serve has returned, and the request is not in flight then. Serve
// called Begin after its lock, as the read ended: the handler's return
// could come between, end the request (its final End, with no span to
// end) and return, and the Begin followed, in flight after the request
// was over until the reading goroutine ended it again. It never stayed in
// flight: the goroutine ends what it began once it sees the request over.
func TestServeTrackerNothingAfterServeReturns(t *testing.T) {
	tr := &heldTracker{holdable: newHoldable()}
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	read := newGate()
	r := httptest.NewRequest("POST", "/", nil)
	r.Body = &gatedBody{g: read}
	ret, readDone, served := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(served)
		Serve(&gatedWriter{g: newGate()}, r, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			tr.lock.Store(&w.(*statusWriter).mu)
			go func() {
				defer close(readDone)
				var b [8]byte
				r.Body.Read(b[:])
			}()
			<-ret
		}), clock, tr)
	}()
	<-read.in // the read waits: the request is not in flight
	tr.armed.Store(true)
	read.out <- struct{}{} // the read ends: the request begins again
	held := false
	select {
	case <-tr.held: // its Begin held before it counts
		held = true
	case <-readDone: // its Begin made under the lock
	}
	close(ret)
	<-served
	tr.record("returned", 0)
	tr.mu.Lock()
	inFlight := tr.n
	tr.mu.Unlock()
	if held {
		tr.release <- struct{}{}
		<-readDone
	}
	if got, want := strings.Join(tr.calls, " "), "begin end begin observe 200 end returned"; got != want {
		t.Errorf("calls %q, want %q", got, want)
	}
	if inFlight != 0 || tr.n != 0 {
		t.Errorf("in flight %d as Serve returned and %d once all is over, want 0 and 0", inFlight, tr.n)
	}
}
