package timing

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestServeStatusPanicAndClientGone: ServeStatus reports 500 for a handler
// that panicked, written or not (the response was cut short), with sent
// true only when it had written (a recoverer further out answers the
// panic with the headers still unsent: TestServeStatusPanicBeforeAnyStatusIsUnsent),
// and done runs before the panic goes on; 499 (nginx's "client
// closed request") with sent false for one that wrote nothing once its
// request's context was done, canceled or past its deadline; and what a
// handler wrote before its client went away.
func TestServeStatusPanicAndClientGone(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ctx    func() (context.Context, context.CancelFunc)
		h      http.HandlerFunc
		status int
		sent   bool
		panics bool
	}{
		{"panic, nothing written", nil, func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) }, 500, false, true},
		{"panic after header", nil, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			panic(http.ErrAbortHandler)
		}, 500, true, true},
		{"client gone, nothing written", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, func(w http.ResponseWriter, r *http.Request) {}, 499, false, false},
		{"deadline passed, nothing written", func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(context.Background(), time.Unix(0, 0))
		}, func(w http.ResponseWriter, r *http.Request) {}, 499, false, false},
		{"client gone after a status", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) }, 502, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			if tc.ctx != nil {
				ctx, cancel := tc.ctx()
				defer cancel()
				r = r.WithContext(ctx)
			}
			var done []string
			var p any
			func() {
				defer func() {
					p = recover()
					if p != nil && len(done) == 0 {
						t.Errorf("the panic went on before done was called")
					}
				}()
				ServeStatus(httptest.NewRecorder(), r, tc.h, nil, func(status int, sent bool) {
					done = append(done, fmt.Sprintf("%d/%v", status, sent))
				})
			}()
			if want := []string{fmt.Sprintf("%d/%v", tc.status, tc.sent)}; !slices.Equal(done, want) {
				t.Errorf("done told %v, want %v", done, want)
			}
			if tc.panics != (p != nil) {
				t.Errorf("recovered %v; want the handler's panic passed on, and only it", p)
			}
		})
	}
}

// TestServeStatusExplicitOKAnd1xx: a 200 written with WriteHeader is
// the final status (before is told it, and the headers went out), and a
// status of the 1xx range other than 101 (199 here) is informational.
func TestServeStatusExplicitOKAnd1xx(t *testing.T) {
	for _, tc := range []struct {
		name   string
		h      http.HandlerFunc
		before []int
		status int
		sent   bool
	}{
		{"200 only", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) }, []int{200}, 200, true},
		{"199 then 404", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(199)
			w.WriteHeader(http.StatusNotFound)
		}, []int{404}, 404, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before []int
			var status int
			var sent bool
			ServeStatus(&bareWriter{}, httptest.NewRequest("GET", "/", nil), tc.h,
				func(s int) { before = append(before, s) },
				func(s int, sn bool) { status, sent = s, sn })
			if !slices.Equal(before, tc.before) || status != tc.status || sent != tc.sent {
				t.Errorf("before told %v, done %d, sent %v; want %v, %d, %v", before, status, sent, tc.before, tc.status, tc.sent)
			}
		})
	}
}

// TestServeStatusReadFrom: a body copied through ReadFrom (io.Copy over
// net/http's HTTP/1 writer, sendfile) before any status writes 200: before
// is told it, and the headers went out.
func TestServeStatusReadFrom(t *testing.T) {
	w := &http1Writer{}
	var before []int
	var sent bool
	ServeStatus(w, httptest.NewRequest("GET", "/", nil), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(w, struct{ io.Reader }{strings.NewReader("body")})
	}), func(s int) { before = append(before, s) }, func(_ int, s bool) { sent = s })
	if !slices.Equal(before, []int{200}) || !sent || w.readFrom != 1 || w.body.String() != "body" {
		t.Errorf("before told %v, sent %v, ReadFrom called %d times, body %q; want [200], true, once, body", before, sent, w.readFrom, w.body.String())
	}
}

// flushCounter is a bare writer that can flush, and counts its flushes.
type flushCounter struct {
	bareWriter
	flushes int
}

func (w *flushCounter) Flush() { w.flushes++ }

// flushErrorWriter is a bare writer that flushes through FlushError
// only, as http.ResponseController looks for first.
type flushErrorWriter struct{ bareWriter }

func (w *flushErrorWriter) FlushError() error { return nil }

// TestServeFlusher: the handler's writer is an http.Flusher over any
// writer, as net/http's are, and its Flush reaches a writer that can
// flush, sending 200 when nothing was written.
func TestServeFlusher(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    func() http.ResponseWriter
	}{
		{"bare", func() http.ResponseWriter { return &bareWriter{} }},
		{"flushing", func() http.ResponseWriter { return &flushCounter{} }},
		{"HTTP/1", func() http.ResponseWriter { return &http1Writer{} }},
		{"HTTP/2", func() http.ResponseWriter { return &http2Writer{} }},
	} {
		w := tc.w()
		ok := false
		ServeStatus(w, httptest.NewRequest("GET", "/", nil), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var f http.Flusher
			if f, ok = w.(http.Flusher); ok {
				f.Flush()
			}
		}), nil, func(int, bool) {})
		if !ok {
			t.Errorf("over a %s writer: the handler's writer is no http.Flusher", tc.name)
		}
		if fc, counts := w.(*flushCounter); counts && fc.flushes != 1 {
			t.Errorf("over a %s writer: %d flushes reached it, want 1", tc.name, fc.flushes)
		}
	}
}

// TestServeStatusFlushNotSupported: a flush over a writer that cannot
// flush (a wrapper with neither Flush nor Unwrap) sends nothing, so it
// writes no status: the status a handler writes after it is the
// response's, and one that writes nothing more sent nothing. Both
// recorded 200 at the flush, as if it had sent the headers: a 503 written
// after it was reported 200, and a count: failed policy did not count it.
func TestServeStatusFlushNotSupported(t *testing.T) {
	flushThen := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			http.NewResponseController(w).Flush()
			w.(http.Flusher).Flush()
			if status != 0 {
				w.WriteHeader(status)
			}
		}
	}
	for _, tc := range []struct {
		name   string
		then   int
		before []int
		status int
		sent   bool
	}{
		{"then 503", http.StatusServiceUnavailable, []int{503}, 503, true},
		{"then nothing", 0, nil, 200, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &bareWriter{}
			var before []int
			var status int
			var sent bool
			ServeStatus(w, httptest.NewRequest("GET", "/", nil), flushThen(tc.then),
				func(s int) { before = append(before, s) },
				func(s int, sn bool) { status, sent = s, sn })
			if !slices.Equal(before, tc.before) || status != tc.status || sent != tc.sent {
				t.Errorf("ServeStatus: before told %v, done %d, sent %v; want %v, %d, %v", before, status, sent, tc.before, tc.status, tc.sent)
			}
			if tc.then != 0 {
				// Serve over ServeStatus (the middleware's feedback over
				// a policy's count), also under a wrapper that offers
				// only Unwrap, and over writers that flush for contrast:
				// there the flush sent 200.
				cut, flushed := fmt.Sprintf("[%d/7ms]", tc.then), "[200/7ms]"
				for _, c := range []struct {
					name string
					w    http.ResponseWriter
					want string
				}{
					{"bare", &bareWriter{}, cut}, {"Unwrap-only over bare", unwrapOnly{&bareWriter{}}, cut},
					{"Flusher", &flushCounter{}, flushed}, {"Unwrap-only over Flusher", unwrapOnly{&flushCounter{}}, flushed},
					{"FlushError", &flushErrorWriter{}, flushed},
				} {
					var inner int
					got, _ := serve(func(w http.ResponseWriter, r *http.Request) {
						ServeStatus(w, r, flushThen(tc.then), nil, func(s int, _ bool) { inner = s })
					}, c.w)
					if fmt.Sprint(got) != c.want || fmt.Sprintf("[%d/7ms]", inner) != c.want {
						t.Errorf("Serve over ServeStatus over a %s writer: Serve reported %v, ServeStatus %d; want %s both", c.name, got, inner, c.want)
					}
				}
			}
		})
	}
}
