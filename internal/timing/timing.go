// Package timing times a handler for a health observer: the latency of
// each request it serves (its own time, not the time it waits on its
// client) and the status it answers, through a response writer that
// keeps the optional interfaces handlers look for. The
// middleware's SetFeedback and adaptive.Controller.Handler share it
// ([Serve]), and the middleware reads the status of a response a policy
// may not count (policy.CountIf) through the same writer ([ServeStatus]).
//
// Serve judges the service, not its clients: a request whose client went
// away before its handler ended ([ClientGone]) is not reported, whatever
// the handler answered, while one whose server-side deadline ran out is.
package timing

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"path"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/reqcopy"
)

// An Observer is told each request's latency and status.
type Observer interface {
	Observe(latency time.Duration, status int)
}

// A Tracker is an Observer also told when each request begins, so that it
// can see the requests in flight: a handler that does not return sends no
// Observe. Serve calls Begin before the handler and End on what it
// returned once the request is over, observed or not; and, while the
// handler waits on its client, End as the wait begins and Begin again as
// it ends (see [Serve]): a request may so begin several times, on
// whichever goroutine waited, each Begin ended once. Those calls are made
// under a lock of the request's, which orders them with its end: none
// comes after Serve returns. They must not wait on the request's handler.
type Tracker interface {
	Observer
	Begin() interface{ End() }
}

// Serve serves r with next and tells o how long next took of its own (read
// on clock; never a negative latency, 0 when the clock was set back
// meanwhile) and the status it answered: 200 when it wrote nothing
// (net/http answers 200), 500 when it panicked (the response was cut
// short, even after a status; the panic goes on).
//
// The latency is the service's, not its client's: the time next spends
// waiting on its client is taken off, so that a client cannot make a
// request as slow as it likes by trickling its upload or reading its
// response slowly. Next waits on its client while it reads r.Body or
// closes it (which may drain what is left of it), and while it writes,
// flushes or copies (ReadFrom) to w: from the call to the return, on
// clock, with the waits of other goroutines of next (a reverse proxy's
// transport reading the body while next writes) counted once while they
// overlap, and a wait still in progress when next returns counted to
// then. A source next copies to w (io.Copy) is read in next's own time
// (a backend's body), but for a file or a connection, which net/http
// may send through the kernel (sendfile, splice): its whole ReadFrom is
// a wait. So is a write that blocks because the server's own network is
// saturated rather than the client slow: Serve cannot tell them apart.
// A handler that buffers its response (an [http.TimeoutHandler] in next)
// writes into the buffer in its own time, waiting on no client; the
// buffer's copy to w is the wait. A timeout of such a handler that its
// client ran out (an upload trickled past it) is its 503 all the same,
// reported: Serve sees the status, not why the deadline inside next ran
// out.
// Unless r.Body is nil or [http.NoBody], next serves a copy of r (as
// r.WithContext makes) whose Body is wrapped, r being left as it is for
// net/http, which looks at its Body; the forms next parses are given to r
// after (a MultipartForm's files are so removed), and so are the pattern
// and path values a router in next matched (r.Pattern, r.PathValue), which
// a middleware outside Serve may read once it returns; and the copy is
// given the trailer net/http sets on r as the body ends.
//
// A request whose connection the handler hijacked is not reported: it has
// no status, and its latency is the connection's. Nor is one whose client
// went away before next ended (r's context cancelled as net/http cancels
// it, as the connection fails to read or write or the HTTP/2 stream is
// reset: see [ClientGone]), whatever next did then: the 500 of a handler
// whose query returned context.Canceled, a reverse proxy's 502 (or its
// panic when its copy to the client fails), a 200 no one read. Its status
// reached no one, and its latency is mostly how long the client waited,
// shorter than the service would have taken: neither says how the
// service is doing (Netflix's concurrency-limits ignores a call its
// client cancelled, and Envoy's adaptive concurrency takes no sample of a
// request reset before its response ended). A request whose deadline ran
// out (a server-side timeout) is reported, panic or not: it ran out of
// the time the server gives it; so is one whose context the server
// cancelled with a cause of its own, and one whose handler spent at least
// its server's WriteTimeout of its own time (net/http enforces that
// timeout over HTTP/2 by cancelling the context as a client's stream reset
// does, and over HTTP/1 a write past it fails, which cancels the context
// too; on clock, which is taken to run as real time then). One whose
// WriteTimeout passed while next waited on a slow client is not: the
// client ran it out.
//
// When o is a [Tracker], its Begin is called first and the End of what it
// returned last, in every case (a request its client left too); or as the
// handler hijacks the connection, which may serve it (a WebSocket's) long
// after: the request is over. While next waits on its client, the request
// is not in flight for the service: End is called as the first wait
// begins, and Begin again as the last ends (a request of a client that
// trickles its upload is in flight from the end of its last wait).
func Serve(w http.ResponseWriter, r *http.Request, next http.Handler, clock algorithms.Clock, o Observer) {
	sw, hw := wrapStatus(w, r)
	sw.clock = clock
	if t, ok := o.(Tracker); ok {
		sw.tracker = t
		sw.span = t.Begin()
		// Deferred at once, so that it runs whatever panics after it
		// (the clock), and last.
		defer sw.end()
	}
	req := r
	if body := r.Body; body != nil && body != http.NoBody {
		// next reads the body through a copy of r: net/http looks at
		// its own request's Body, by type, as the response's header
		// goes out (a body left unread, or its client waiting for "100
		// Continue", closes the connection; any other body is drained
		// first), which the wrapper must not stand for.
		sw.body = clientBody{ReadCloser: body, w: sw, r: r}
		sw.req = *r
		sw.req.Body = &sw.body
		req = &sw.req
		// What next sets on the copy (forms, a router's pattern)
		// is given to r after it.
		defer reqcopy.Back(r, &sw.req)
	}
	start := clock.Now()
	returned := false
	defer func() {
		if sw.hijacked {
			return
		}
		own := sw.own(start)
		status := sw.status
		switch {
		case ClientGone(r.Context()) && !outlasted(r, own):
			// The client went away before the handler ended: whatever
			// the handler did on its way out (a 500 for its cancelled
			// query, a reverse proxy's 502, or its panic with
			// http.ErrAbortHandler when its copy to the client fails)
			// reached no one, and its latency is the client's patience.
			// A deadline exceeded is the server's own timeout: reported,
			// as is a handler that spent the server's WriteTimeout on
			// its own.
			return
		case !returned:
			status = http.StatusInternalServerError
		case status == 0:
			status = http.StatusOK
		}
		o.Observe(own, status)
	}()
	next.ServeHTTP(hw, req)
	returned = true
}

// ClientGone reports whether ctx, a request's context, was cancelled as
// net/http cancels it when the request's client goes away (its connection
// closed, or its HTTP/2 stream reset): its error is [context.Canceled], and
// so is its cause ([context.Cause]), net/http giving none other. A
// deadline that ran out ([context.DeadlineExceeded]: a timeout of the
// server's, such as [http.TimeoutHandler]'s) is not a client gone, nor a
// cancellation the server made with a cause of its own
// ([context.WithCancelCause]).
func ClientGone(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.Canceled) && errors.Is(context.Cause(ctx), context.Canceled)
}

// outlasted reports whether the handler of r, having spent own of its own
// time (not waiting on its client), ran for at least the WriteTimeout of
// r's server, if it has one. Over HTTP/2, net/http enforces that timeout
// by resetting the stream and cancelling r's context with no cause, as
// when the client resets it, so that ClientGone cannot tell them apart;
// over HTTP/1, a write past it fails, and a failed write cancels r's
// context too. A handler whose own time reached it ran out of the time
// the server gives it; one that reached it waiting on a slow client did
// not. It is asked only of a request ClientGone reports, off the common
// path.
func outlasted(r *http.Request, own time.Duration) bool {
	srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server)
	return srv != nil && srv.WriteTimeout > 0 && own >= srv.WriteTimeout
}

// wrapStatus returns w wrapped to record its status, as a writer with the
// optional interfaces of w that handlers look for with type assertions:
// [http.Hijacker] and [io.ReaderFrom] (net/http's HTTP/1 writer), or
// [http.Pusher] (HTTP/2), and [http.CloseNotifier] (deprecated, but still
// asserted: gin's Context.Stream panics without it) when w has them;
// [http.Flusher] always, as net/http's writers are. Others are reached
// through [http.ResponseController] (Unwrap). r is the request w answers:
// its protocol says whether 101 is final.
//
// When w is no Hijacker but one lies down its Unwrap chain (w is a
// wrapper, such as a logging middleware's, that offers only Unwrap), the
// wrapper's Unwrap returns w under a [hijackHook], so that a hijack made
// through it (by http.ResponseController) is seen too.
func wrapStatus(w http.ResponseWriter, r *http.Request) (*statusWriter, http.ResponseWriter) {
	// Each writer is made whole, then filled in through its statusWriter:
	// a statusWriter holds a lock, which is not to be copied.
	var sw *statusWriter
	var rw http.ResponseWriter
	//lint:ignore SA1019 kept for the handlers that still assert it
	_, notifies := w.(http.CloseNotifier)
	_, hijacks := w.(http.Hijacker)
	_, pushes := w.(http.Pusher)
	switch {
	case hijacks && notifies:
		hw := &hijackNotifyWriter{}
		sw, rw = &hw.statusWriter, hw
	case hijacks:
		hw := &hijackWriter{}
		sw, rw = &hw.statusWriter, hw
	case pushes && notifies:
		pw := &pushNotifyWriter{}
		sw, rw = &pw.statusWriter, pw
	case pushes:
		pw := &pushWriter{}
		sw, rw = &pw.statusWriter, pw
	case notifies:
		nw := &notifyWriter{}
		sw, rw = &nw.statusWriter, nw
	default:
		sw = &statusWriter{}
		rw = sw
	}
	sw.ResponseWriter, sw.final101, sw.ctx = w, r.ProtoMajor < 2, r.Context()
	if !hijacks && unwrapsToHijacker(w) {
		sw.hook = hijackHook{ResponseWriter: w, sw: sw}
		sw.hooked = true
	}
	return sw, rw
}

// unwrapsToHijacker reports whether http.ResponseController would find a
// Hijacker in w or down its Unwrap chain.
func unwrapsToHijacker(w http.ResponseWriter) bool {
	return down(w, func(w http.ResponseWriter) (bool, bool) {
		_, ok := w.(http.Hijacker)
		return ok, ok
	})
}

// down walks w and its Unwrap chain, as http.ResponseController does,
// and returns what is reports of the first writer it knows about (known),
// or false at the chain's end.
func down(w http.ResponseWriter, is func(http.ResponseWriter) (yes, known bool)) bool {
	for {
		if yes, known := is(w); known {
			return yes
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return false
		}
		w = u.Unwrap()
	}
}

// statusWriter records the first final status a handler writes and, for
// Serve, how long the handler waits on its client.
type statusWriter struct {
	http.ResponseWriter
	status   int
	hijacked bool
	// final101 is set over HTTP/1, where net/http takes 101 (Switching
	// Protocols) as the response's final status and sends nothing after
	// it; over HTTP/2 it sends every 1xx as informational, 101 too.
	final101 bool
	// ctx is the request's context, which holds the server (see
	// superfluous).
	ctx context.Context
	// hook, when hooked, is what Unwrap returns: see wrapStatus.
	hook   hijackHook
	hooked bool
	// before, when not nil, is told the status as it is recorded, before
	// it goes on (see ServeStatus).
	before func(status int)

	// clock, when not nil (Serve), times the waits on the client; a
	// Tracker, when not nil, is told the request begins again as they
	// end.
	clock   algorithms.Clock
	tracker Tracker
	// body is the request's body as Serve's handler reads it, in req,
	// the copy of the request it serves.
	body clientBody
	req  http.Request

	mu sync.Mutex // guards the fields below
	// span, when not nil, is the request's in flight for a Tracker,
	// ended (and set to nil) as a wait on the client begins or the
	// request is over (hijacked, or Serve returning).
	span interface{ End() }
	over bool // no span again
	// waits is how many waits on the client are in progress (reads of
	// the body on one goroutine while next writes on another), since
	// when one has been, and waitedFor the time with one in progress
	// before since.
	waits     int
	since     time.Time
	waitedFor time.Duration
}

// hijack records that the handler took the connection over, which ends
// its span.
func (w *statusWriter) hijack() {
	w.hijacked = true
	w.end()
}

// end ends w's span, if it has one not ended yet, and begins none again.
func (w *statusWriter) end() {
	w.mu.Lock()
	w.over = true
	span := w.span
	w.span = nil
	w.mu.Unlock()
	if span != nil {
		span.End()
	}
}

// wait records that the handler begins to wait on its client, which
// ends its span unless another wait is in progress. Call waited when it
// ends. It requires w.clock.
//
// wait, waited and own read the clock, and call the Tracker, with w.mu
// held: the lock orders the readings as it orders the counts, so that
// the waits it counts one after the other never overlap on the clock (a
// reading taken before the lock, as a wait began, could be older than
// the end of a wait counted before it, and the time both spanned was
// taken off twice), and no goroutine of the handler's tells the Tracker
// anything once end has run (a Begin made after the lock, as a wait
// ended, could follow the request's final End). Each reads the clock
// before it changes anything, so that a clock that panics leaves the
// counts as they were; w.mu is released by defer, whatever panics.
func (w *statusWriter) wait() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waits > 0 {
		w.waits++
		return
	}
	now := w.clock.Now()
	if span := w.span; span != nil {
		w.span = nil
		span.End()
	}
	w.since, w.waits = now, 1
}

// waited records that a wait on the client ended: when it was the last in
// progress, its time counts, and the request is in flight again.
func (w *statusWriter) waited() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waits > 1 {
		w.waits--
		return
	}
	now := w.clock.Now()
	w.waits = 0
	w.waitedFor = addUpTo(w.waitedFor, now.Sub(w.since))
	if w.tracker != nil && !w.over {
		w.span = w.tracker.Begin()
	}
}

// own returns how much of the time from start to now, on w.clock, the
// handler spent on its own: not waiting on its client (a wait still in
// progress counts up to now). It is never negative.
func (w *statusWriter) own(start time.Time) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	end := w.clock.Now()
	waited := w.waitedFor
	if w.waits > 0 {
		waited = addUpTo(waited, end.Sub(w.since))
	}
	if d := end.Sub(start); d > waited {
		return d - waited
	}
	return 0
}

// addUpTo returns total + d, d taken as 0 when negative (a clock set
// back), saturating at the largest Duration.
func addUpTo(total, d time.Duration) time.Duration {
	if d <= 0 {
		return total
	}
	if total > math.MaxInt64-d {
		return math.MaxInt64
	}
	return total + d
}

// clientBody is a request's body as Serve's handler reads it, in w.req,
// the copy of r it serves: reading it and closing it (which may drain what
// the client has yet to send) are waits on the client.
type clientBody struct {
	io.ReadCloser
	w *statusWriter
	r *http.Request
}

func (b *clientBody) Read(p []byte) (int, error) {
	b.w.wait()
	defer b.w.waited()
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.trailer()
	}
	return n, err
}

func (b *clientBody) Close() error {
	b.w.wait()
	defer b.w.waited()
	err := b.ReadCloser.Close()
	b.trailer()
	return err
}

// trailer gives the copy the trailer net/http set on r as the body ended,
// when the copy has none: the map of the trailers a client announced is
// r's and the copy's, but net/http makes that of trailers it did not
// announce (HTTP/1) as the body ends, on r alone. It is called where the
// handler may read the trailer after: once the body's Read returned EOF,
// or it was closed.
func (b *clientBody) trailer() {
	if b.w.req.Trailer == nil {
		b.w.req.Trailer = b.r.Trailer
	}
}

// record records status, the first final one, telling before.
func (w *statusWriter) record(status int) {
	w.status = status
	if w.before != nil {
		w.before(status)
	}
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && (code >= 200 || code == http.StatusSwitchingProtocols && w.final101) {
		w.record(code)
	} else if w.status != 0 && w.final101 && code >= 100 && code <= 999 && w.superfluous() {
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

// superfluous tells, as net/http's HTTP/1 server does, a WriteHeader call
// after the response's status was sent, and reports whether it did: on
// the server's ErrorLog (or the log package's default logger), naming the
// first function on the stack outside net/http and this package, the
// handler that made the call. Passed on, the call would be told by
// net/http naming this package's WriteHeader, its caller, which blames
// the middleware for its handler's mistake. It tells nothing (and
// reports false) for a writer that no net/http server is under (a
// ResponseRecorder), which takes the call as it will.
func (w *statusWriter) superfluous() bool {
	srv, _ := w.ctx.Value(http.ServerContextKey).(*http.Server)
	if srv == nil {
		return false
	}
	f := callerOutside()
	msg := fmt.Sprintf("http: superfluous response.WriteHeader call from %s (%s:%d)", f.Function, path.Base(f.File), f.Line)
	if srv.ErrorLog != nil {
		srv.ErrorLog.Print(msg)
	} else {
		log.Print(msg)
	}
	return true
}

// ownPrefix is the prefix of the names of this package's functions.
var ownPrefix = reflect.TypeFor[statusWriter]().PkgPath() + "."

// callerOutside returns the frame of the first function on the stack
// that is neither this package's nor net/http's, as net/http finds the
// caller it names in its log.
func callerOutside() runtime.Frame {
	var pcs [16]uintptr
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs[:])])
	for {
		f, more := frames.Next()
		if !more || !strings.HasPrefix(f.Function, ownPrefix) && !strings.HasPrefix(f.Function, "net/http.") {
			return f
		}
	}
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.record(http.StatusOK)
	}
	if w.clock == nil {
		return w.ResponseWriter.Write(b)
	}
	w.wait()
	defer w.waited()
	return w.ResponseWriter.Write(b)
}

// writeOnly is a statusWriter as an io.Writer alone, for io.CopyBuffer
// (which would call its ReadFrom).
type writeOnly struct{ w *statusWriter }

func (o writeOnly) Write(b []byte) (int, error) { return o.w.Write(b) }

// Unwrap lets http.ResponseController reach the underlying writer (under
// a hijackHook when the writer reaches a Hijacker only by unwrapping).
func (w *statusWriter) Unwrap() http.ResponseWriter {
	if w.hooked {
		return &w.hook
	}
	return w.ResponseWriter
}

// hijackHook is what a statusWriter's Unwrap returns when the writer under
// it is a wrapper that reaches a Hijacker only through Unwrap: a Hijacker
// whose Hijack goes on down the wrapper's chain, as http.ResponseController
// would, and marks the statusWriter hijacked. Its Unwrap returns the
// wrapper, so http.ResponseController still reaches the wrapper's other
// methods.
type hijackHook struct {
	http.ResponseWriter
	sw *statusWriter
}

// Hijack hands the connection over through the wrapper's Unwrap chain; the
// request is no longer reported.
func (h *hijackHook) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err == nil {
		h.sw.hijack()
	}
	return conn, rw, err
}

// Unwrap returns the wrapper.
func (h *hijackHook) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// Flush passes a flush on when the underlying writer supports it.
func (w *statusWriter) Flush() { _ = w.FlushError() }

// FlushError passes a flush on, and its error: [http.ErrNotSupported]
// when the underlying writer cannot flush. http.ResponseController.Flush
// calls it. A flush that reaches no writer able to flush sends nothing:
// it records no status.
func (w *statusWriter) FlushError() error {
	if w.status == 0 && w.flushes() {
		w.record(http.StatusOK)
	}
	if w.clock != nil {
		w.wait()
		defer w.waited()
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// flushes reports whether a flush reaches a writer able to flush down the
// underlying writer's Unwrap chain, looked for as
// http.ResponseController.Flush does, and past another statusWriter (Serve
// and ServeStatus nest) to what it flushes.
func (w *statusWriter) flushes() bool {
	return down(w.ResponseWriter, func(w http.ResponseWriter) (bool, bool) {
		switch t := w.(type) {
		case interface{ flushes() bool }:
			return t.flushes(), true
		case interface{ FlushError() error }, http.Flusher:
			return true, true
		}
		return false, false
	})
}

// hijackWriter is a statusWriter over net/http's HTTP/1 writer.
type hijackWriter struct{ statusWriter }

// Hijack hands the connection over; the request is no longer reported.
func (w *hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := w.ResponseWriter.(http.Hijacker).Hijack()
	if err == nil {
		w.hijack()
	}
	return conn, rw, err
}

// ReadFrom lets io.Copy use the underlying writer's ReadFrom (sendfile).
// Under Serve, only for a source net/http may send through the kernel (a
// file, a connection), a wait on the client as a whole; any other is
// copied through Write, so that reading it is the handler's own time and
// writing it a wait.
//
// Before any status, the copy sends one only once r gives a byte: its
// first bytes go through Write (recording 200 then), as net/http's own
// ReadFrom sends them, and the rest through ReadFrom. A source that fails
// or is empty at once sends nothing, and leaves the status to the handler
// (a 502 after its backend's body failed).
func (w *hijackWriter) ReadFrom(r io.Reader) (int64, error) {
	var first int64
	if w.status == 0 {
		n, err := w.writeFirst(r)
		if first = int64(n); err != nil || n == 0 {
			return first, err
		}
	}
	n, err := w.readFrom(r)
	return first + n, err
}

// readFrom is ReadFrom once a status is recorded.
func (w *hijackWriter) readFrom(r io.Reader) (int64, error) {
	rf, ok := w.ResponseWriter.(io.ReaderFrom)
	switch {
	case w.clock == nil && ok:
		return rf.ReadFrom(r)
	case w.clock == nil:
		return io.Copy(struct{ io.Writer }{w.ResponseWriter}, r)
	case ok && sentByKernel(r):
		w.wait()
		defer w.waited()
		return rf.ReadFrom(r)
	}
	buf := copyBufs.Get().(*[32 << 10]byte)
	defer copyBufs.Put(buf)
	return io.CopyBuffer(writeOnly{&w.statusWriter}, r, buf[:])
}

// firstLen is how much of a source ReadFrom copies through Write before
// any status: net/http's sniffLen, which its own ReadFrom copies so.
const firstLen = 512

// writeFirst reads r until it gives a byte (at most firstLen), and writes
// what it gave through Write. It returns the bytes written, and the
// error of the read (nil for io.EOF) or of the write.
func (w *hijackWriter) writeFirst(r io.Reader) (int, error) {
	buf := copyBufs.Get().(*[32 << 10]byte)
	defer copyBufs.Put(buf)
	n, err := io.ReadAtLeast(r, buf[:firstLen], 1)
	if n == 0 {
		if err == io.EOF {
			err = nil
		}
		return 0, err
	}
	return w.statusWriter.Write(buf[:n])
}

// copyBufs are the buffers of hijackWriter.ReadFrom's copies (io.Copy's
// size), reused so that a copy allocates none.
var copyBufs = sync.Pool{New: func() any { return new([32 << 10]byte) }}

// sentByKernel reports whether r is a source net/http's ReadFrom may send
// through the kernel (sendfile, splice): a syscall.Conn (an *os.File, a
// *net.TCPConn), or an io.LimitedReader of one.
func sentByKernel(r io.Reader) bool {
	if lr, ok := r.(*io.LimitedReader); ok {
		r = lr.R
	}
	_, ok := r.(syscall.Conn)
	return ok
}

// pushWriter is a statusWriter over net/http's HTTP/2 writer.
type pushWriter struct{ statusWriter }

// Push passes a server push on.
func (w *pushWriter) Push(target string, opts *http.PushOptions) error {
	return w.ResponseWriter.(http.Pusher).Push(target, opts)
}

// notifyWriter, hijackNotifyWriter and pushNotifyWriter are the writers
// above over one that is an [http.CloseNotifier], as net/http's are.
type (
	notifyWriter       struct{ statusWriter }
	hijackNotifyWriter struct{ hijackWriter }
	pushNotifyWriter   struct{ pushWriter }
)

// CloseNotify passes the underlying writer's on.
func (w *notifyWriter) CloseNotify() <-chan bool { return closeNotify(w.ResponseWriter) }

// CloseNotify passes the underlying writer's on.
func (w *hijackNotifyWriter) CloseNotify() <-chan bool { return closeNotify(w.ResponseWriter) }

// CloseNotify passes the underlying writer's on.
func (w *pushNotifyWriter) CloseNotify() <-chan bool { return closeNotify(w.ResponseWriter) }

// closeNotify returns the CloseNotify channel of w, a CloseNotifier.
func closeNotify(w http.ResponseWriter) <-chan bool {
	//lint:ignore SA1019 kept for the handlers that still assert it
	return w.(http.CloseNotifier).CloseNotify()
}

// StatusClientClosed is the status [ServeStatus] reports for a request
// whose client went away (its context done) before the handler wrote a
// status: nginx's 499, "client closed request".
const StatusClientClosed = 499

// ServeStatus serves r with next through the same writer as Serve, and
// then calls done with the status next answered: the first final status
// it wrote (101 is one over HTTP/1, as net/http takes it, and an
// informational status over HTTP/2, as net/http sends it), 200 when it
// wrote none, [StatusClientClosed] when it wrote none and r's context is
// done (its client went away, or the server's deadline passed), 101 when
// it hijacked the connection (asserting [http.Hijacker] or through
// [http.ResponseController], even past a wrapper w that offers only
// Unwrap), and 500 when it panicked, even after writing a status (the
// response was cut short). done runs before the panic goes on. Its sent
// is false when next wrote, flushed and hijacked nothing, whether it
// returned or panicked: w's headers can still change, net/http sending
// them only once its handler returns (or a recoverer further out
// answering the panic with them).
//
// before, when not nil, is called with the first final status next writes
// (200 for a Write, Flush or ReadFrom before any; not for a Flush that
// reaches no writer able to flush, nor for a ReadFrom whose source gives
// no byte, which send nothing), just before it goes on to w, while w's
// headers can still change.
func ServeStatus(w http.ResponseWriter, r *http.Request, next http.Handler, before func(status int), done func(status int, sent bool)) {
	sw, hw := wrapStatus(w, r)
	sw.before = before
	returned := false
	defer func() {
		status := sw.status
		sent := status != 0 || sw.hijacked
		switch {
		case !returned:
			status = http.StatusInternalServerError
		case sw.hijacked:
			status = http.StatusSwitchingProtocols
		case status == 0 && r.Context().Err() != nil:
			status = StatusClientClosed
		case status == 0:
			status = http.StatusOK
		}
		done(status, sent)
	}()
	next.ServeHTTP(hw, r)
	returned = true
}
