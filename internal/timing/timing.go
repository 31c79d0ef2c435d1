// Package timing times a handler for a health observer: the latency of
// each request it serves and the status it answers, through a response
// writer that keeps the optional interfaces handlers look for. The
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
	"io"
	"net"
	"net/http"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// An Observer is told each request's latency and status.
type Observer interface {
	Observe(latency time.Duration, status int)
}

// A Tracker is an Observer also told when each request begins, so that it
// can see the requests in flight: a handler that does not return sends no
// Observe. Serve calls Begin before the handler and End on what it
// returned once the request is over, observed or not.
type Tracker interface {
	Observer
	Begin() interface{ End() }
}

// Serve serves r with next and tells o how long next took (read on clock;
// 0 when the clock was set back meanwhile, never a negative latency) and
// the status it answered: 200 when it wrote nothing (net/http answers
// 200), 500 when it panicked (the response was cut short, even after a
// status; the panic goes on). A request whose connection the handler
// hijacked is not reported: it has no status, and its latency is the
// connection's. Nor is one whose client went away before next ended (r's
// context cancelled as net/http cancels it: see [ClientGone]), whatever
// next did then: the 500 of a handler whose query returned
// context.Canceled, a reverse proxy's 502 (or its panic when its copy to
// the client fails), a 200 no one read. Its status reached no one, and
// its latency is mostly how long the client waited, shorter than the
// service would have taken: neither says how the service is doing
// (Netflix's concurrency-limits ignores a call its client cancelled, and
// Envoy's adaptive concurrency takes no sample of a request reset before
// its response ended). A request whose deadline ran out (a server-side
// timeout) is reported, panic or not: it ran out of the time the server
// gives it; so is one whose context the server cancelled with a cause of
// its own, and one whose handler ran for at least its server's
// WriteTimeout (which net/http enforces over HTTP/2 by cancelling the
// context as a client's stream reset does: on clock, which is taken to
// run as real time then). When o is a [Tracker], its Begin is called first and the End
// of what it returned last, in every case (a request its client left
// too); or as the handler hijacks the connection, which may serve it (a
// WebSocket's) long after: the request is over.
func Serve(w http.ResponseWriter, r *http.Request, next http.Handler, clock algorithms.Clock, o Observer) {
	sw, hw := wrapStatus(w, r)
	if t, ok := o.(Tracker); ok {
		sw.span = t.Begin()
		// Deferred at once, so that it runs whatever panics after it
		// (the clock), and last.
		defer sw.end()
	}
	start := clock.Now()
	returned := false
	defer func() {
		status := sw.status
		switch {
		case sw.hijacked:
			return
		case ClientGone(r.Context()) && !outlasted(r, start, clock):
			// The client went away before the handler ended: whatever
			// the handler did on its way out (a 500 for its cancelled
			// query, a reverse proxy's 502, or its panic with
			// http.ErrAbortHandler when its copy to the client fails)
			// reached no one, and its latency is the client's patience.
			// A deadline exceeded is the server's own timeout: reported,
			// as is a handler that ran for the server's WriteTimeout.
			return
		case !returned:
			status = http.StatusInternalServerError
		case status == 0:
			status = http.StatusOK
		}
		o.Observe(max(clock.Now().Sub(start), 0), status)
	}()
	next.ServeHTTP(hw, r)
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

// outlasted reports whether the handler of r, begun at start on clock,
// ran for at least the WriteTimeout of r's server, if it has one. Over
// HTTP/2, net/http enforces that timeout by resetting the stream and
// cancelling r's context with no cause, as when the client resets it, so
// that ClientGone cannot tell them apart; over HTTP/1, a response not
// written by then is never sent. Either way the request ran out of the
// time the server gives it. It is asked only of a request ClientGone
// reports, off the common path.
func outlasted(r *http.Request, start time.Time, clock algorithms.Clock) bool {
	srv, _ := r.Context().Value(http.ServerContextKey).(*http.Server)
	return srv != nil && srv.WriteTimeout > 0 && clock.Now().Sub(start) >= srv.WriteTimeout
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
	base := statusWriter{ResponseWriter: w, final101: r.ProtoMajor < 2}
	//lint:ignore SA1019 kept for the handlers that still assert it
	_, notifies := w.(http.CloseNotifier)
	if _, ok := w.(http.Hijacker); ok {
		if notifies {
			hw := &hijackNotifyWriter{hijackWriter{base}}
			return &hw.statusWriter, hw
		}
		hw := &hijackWriter{base}
		return &hw.statusWriter, hw
	}
	var sw *statusWriter
	var rw http.ResponseWriter
	_, pushes := w.(http.Pusher)
	switch {
	case pushes && notifies:
		pw := &pushNotifyWriter{pushWriter{base}}
		sw, rw = &pw.statusWriter, pw
	case pushes:
		pw := &pushWriter{base}
		sw, rw = &pw.statusWriter, pw
	case notifies:
		nw := &notifyWriter{base}
		sw, rw = &nw.statusWriter, nw
	default:
		plain := base
		sw, rw = &plain, &plain
	}
	if unwrapsToHijacker(w) {
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

// statusWriter records the first final status a handler writes.
type statusWriter struct {
	http.ResponseWriter
	status   int
	hijacked bool
	// final101 is set over HTTP/1, where net/http takes 101 (Switching
	// Protocols) as the response's final status and sends nothing after
	// it; over HTTP/2 it sends every 1xx as informational, 101 too.
	final101 bool
	// hook, when hooked, is what Unwrap returns: see wrapStatus.
	hook   hijackHook
	hooked bool
	// before, when not nil, is told the status as it is recorded, before
	// it goes on (see ServeStatus).
	before func(status int)
	// span, when not nil, is the request's in flight for a Tracker,
	// ended (and set to nil) when the connection is hijacked.
	span interface{ End() }
}

// hijack records that the handler took the connection over, which ends
// its span.
func (w *statusWriter) hijack() {
	w.hijacked = true
	w.end()
}

// end ends w's span, if it has one not ended yet.
func (w *statusWriter) end() {
	if w.span != nil {
		w.span.End()
		w.span = nil
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
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.record(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

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
func (w *hijackWriter) ReadFrom(r io.Reader) (int64, error) {
	if w.status == 0 {
		w.record(http.StatusOK)
	}
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{w.ResponseWriter}, r)
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
// is false when next returned having written, flushed and hijacked
// nothing: w's headers can still change, net/http sending them only once
// its handler returns.
//
// before, when not nil, is called with the first final status next writes
// (200 for a Write, Flush or ReadFrom before any; not for a Flush that
// reaches no writer able to flush, which sends nothing), just before it goes on
// to w, while w's headers can still change.
func ServeStatus(w http.ResponseWriter, r *http.Request, next http.Handler, before func(status int), done func(status int, sent bool)) {
	sw, hw := wrapStatus(w, r)
	sw.before = before
	returned := false
	defer func() {
		status := sw.status
		sent := status != 0 || sw.hijacked || !returned
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
