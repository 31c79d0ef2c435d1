package timing

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// recorder records what Serve reports.
type recorder struct{ got []string }

func (r *recorder) Observe(latency time.Duration, status int) {
	r.got = append(r.got, fmt.Sprintf("%d/%v", status, latency))
}

// serve runs h through Serve on a clock each handler advances by 7ms,
// into w, recovering a panic, and returns what was reported and the panic.
func serve(h http.HandlerFunc, w http.ResponseWriter) (got []string, panicked any) {
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	rec := &recorder{}
	func() {
		defer func() { panicked = recover() }()
		Serve(w, httptest.NewRequest("GET", "/", nil), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			clock.Advance(7 * time.Millisecond)
			h(w, r)
		}), clock, rec)
	}()
	return rec.got, panicked
}

// TestServeStatus: the status reported is the first final one written
// (1xx ignored), 200 when nothing is written, and 500 when the handler
// panics, before or after its header; the panic goes on.
func TestServeStatus(t *testing.T) {
	for _, tc := range []struct {
		name  string
		h     http.HandlerFunc
		want  string
		panic bool
	}{
		{"written", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) }, "[503/7ms]", false},
		{"body only", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }, "[200/7ms]", false},
		{"nothing", func(w http.ResponseWriter, r *http.Request) {}, "[200/7ms]", false},
		{"1xx first", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(http.StatusNotFound)
		}, "[404/7ms]", false},
		{"panic", func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) }, "[500/7ms]", true},
		{"panic after header", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			panic(http.ErrAbortHandler)
		}, "[500/7ms]", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, p := serve(tc.h, httptest.NewRecorder())
			if fmt.Sprint(got) != tc.want {
				t.Errorf("reported %v, want %s", got, tc.want)
			}
			if tc.panic && p != http.ErrAbortHandler || !tc.panic && p != nil {
				t.Errorf("recovered %v; want the handler's panic passed on, and only it", p)
			}
		})
	}
}

// TestServeClientGone: a handler that ends after its client went away
// (its context cancelled as net/http cancels it) is not reported, whether
// it panicked (a reverse proxy panics with http.ErrAbortHandler when the
// copy to the client fails) or returned (having written a 502, say): no
// status reached anyone, and a disconnecting client is no sign of the
// server's health (see TestServeClientCancelled for real servers). A panic
// while the client is still there is a 500, as in TestServeStatus, and so
// is one after a cancellation the server made with a cause of its own.
func TestServeClientGone(t *testing.T) {
	for _, tc := range []struct {
		name string
		gone func(cancel context.CancelCauseFunc)
		h    http.HandlerFunc
		want string
	}{
		{"abort, client gone", clientLeaves, func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) }, "[]"},
		{"abort after header, client gone", clientLeaves, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			panic(http.ErrAbortHandler)
		}, "[]"},
		{"abort, client there", nil, func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) }, "[500/7ms]"},
		{"abort, the server's own cancellation", serverCancels, func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) }, "[500/7ms]"},
		{"returns, client gone", clientLeaves, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) }, "[]"},
		{"returns, the server's own cancellation", serverCancels, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadGateway) }, "[502/7ms]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
			rec := &recorder{}
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			r := httptest.NewRequest("GET", "/", nil).WithContext(ctx)
			func() {
				defer func() { recover() }()
				Serve(httptest.NewRecorder(), r, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					clock.Advance(7 * time.Millisecond)
					if tc.gone != nil {
						tc.gone(cancel)
					}
					tc.h(w, r)
				}), clock, rec)
			}()
			if fmt.Sprint(rec.got) != tc.want {
				t.Errorf("reported %v, want %s", rec.got, tc.want)
			}
		})
	}
}

// clientLeaves cancels a request's context as net/http does when its
// client hangs up: with no cause of its own.
func clientLeaves(cancel context.CancelCauseFunc) { cancel(nil) }

// serverCancels cancels a request's context as a server stopping might,
// with a cause of its own.
func serverCancels(cancel context.CancelCauseFunc) { cancel(errServerStopping) }

// bareWriter is a ResponseWriter with none of the optional interfaces.
type bareWriter struct {
	h    http.Header
	code int
	body strings.Builder
}

func (w *bareWriter) Header() http.Header {
	if w.h == nil {
		w.h = http.Header{}
	}
	return w.h
}
func (w *bareWriter) Write(b []byte) (int, error) { return w.body.Write(b) }
func (w *bareWriter) WriteHeader(code int)        { w.code = code }

// http2Writer has the optional interfaces of net/http's HTTP/2 writer.
type http2Writer struct {
	bareWriter
	pushed []string
}

func (w *http2Writer) Flush() {}
func (w *http2Writer) Push(target string, _ *http.PushOptions) error {
	w.pushed = append(w.pushed, target)
	return nil
}

// http1Writer has the optional interfaces of net/http's HTTP/1 writer.
type http1Writer struct {
	bareWriter
	readFrom int
}

func (w *http1Writer) Flush() {}
func (w *http1Writer) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return nil, nil, errors.New("test writer: no connection")
}
func (w *http1Writer) ReadFrom(r io.Reader) (int64, error) {
	w.readFrom++
	return io.Copy(&w.bareWriter, r)
}

// TestServeKeepsWriterInterfaces: the handler still sees the optional interfaces of the writer it would have been
// given (Hijacker and io.ReaderFrom over HTTP/1, Pusher over HTTP/2), and
// none the writer lacks; http.ResponseController still reports a writer
// that cannot flush. A file copied to the HTTP/1 writer reaches its
// ReadFrom (sendfile).
func TestServeKeepsWriterInterfaces(t *testing.T) {
	type caps struct{ hijacker, pusher, readerFrom bool }
	var got caps
	var flushErr error
	file := filepath.Join(t.TempDir(), "body")
	if err := os.WriteFile(file, []byte("body"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, got.hijacker = w.(http.Hijacker)
		_, got.pusher = w.(http.Pusher)
		_, got.readerFrom = w.(io.ReaderFrom)
		if p, ok := w.(http.Pusher); ok {
			p.Push("/style.css", nil)
		}
		flushErr = http.NewResponseController(w).Flush()
		f, err := os.Open(file)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		io.Copy(w, f)
	})

	w1 := &http1Writer{}
	serve(h, w1)
	if want := (caps{hijacker: true, readerFrom: true}); got != want || flushErr != nil || w1.readFrom != 1 || w1.body.String() != "body" {
		t.Errorf("HTTP/1 writer: handler saw %+v (flush %v, ReadFrom called %d times, body %q); want %+v, a flush, ReadFrom once",
			got, flushErr, w1.readFrom, w1.body.String(), want)
	}

	w2 := &http2Writer{}
	serve(h, w2)
	if want := (caps{pusher: true}); got != want || flushErr != nil || fmt.Sprint(w2.pushed) != "[/style.css]" {
		t.Errorf("HTTP/2 writer: handler saw %+v (flush %v, pushed %v); want %+v, a flush, /style.css pushed", got, flushErr, w2.pushed, want)
	}

	wb := &bareWriter{}
	serve(h, wb)
	if want := (caps{}); got != want || !errors.Is(flushErr, http.ErrNotSupported) || wb.body.String() != "body" {
		t.Errorf("bare writer: handler saw %+v (flush %v, body %q); want %+v and http.ErrNotSupported", got, flushErr, wb.body.String(), want)
	}
}

// TestServeHijacked: a handler can hijack its connection through Serve (a
// WebSocket upgrade asserts http.Hijacker), and the request is not
// reported: its "latency" would be the connection's life, and its status
// none.
func TestServeHijacked(t *testing.T) {
	rec := &recorder{}
	served := make(chan struct{}) // closed once Serve returned
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(served)
		Serve(w, r, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hj, ok := w.(http.Hijacker)
			if !ok {
				http.Error(w, "not a Hijacker", http.StatusInternalServerError)
				return
			}
			conn, buf, err := hj.Hijack()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			defer conn.Close()
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nhijacked")
			buf.Flush()
		}), algotest.NewClock(time.Unix(1_700_000_000, 0)), rec)
	}))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hijacked" {
		t.Fatalf("response %d %q, want the hijacked connection's answer", resp.StatusCode, body)
	}
	<-served
	if len(rec.got) != 0 {
		t.Errorf("reported %v for a hijacked connection, want nothing", rec.got)
	}
}
