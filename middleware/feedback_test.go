package middleware_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// feedbackRecorder records what the middleware tells its Feedback.
type feedbackRecorder struct {
	mu  sync.Mutex
	got []string
}

func (f *feedbackRecorder) Observe(latency time.Duration, status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, fmt.Sprintf("%d/%v", status, latency))
}

// TestFeedback: every request passed to the handler is reported with the
// handler's latency (on the middleware's clock) and status, panics as 500;
// requests the middleware answers itself (429, 400 for no key) are not;
// SetFeedback(nil) stops it.
func TestFeedback(t *testing.T) {
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p := policy.Must(policy.New("per-user", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 3, Window: time.Hour},
		keyfunc.Must(keyfunc.Header("X-User"))))
	m := middleware.MustNew(store, []*policy.Policy{p}, middleware.WithClock(clock))
	fb := &feedbackRecorder{}
	m.SetFeedback(fb)
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clock.Advance(7 * time.Millisecond)
		switch r.URL.Path {
		case "/fail":
			http.Error(w, "down", http.StatusServiceUnavailable)
		case "/panic":
			panic(http.ErrAbortHandler)
		case "/silent":
		default:
			w.Write([]byte("ok"))
		}
	}))
	serve := func(path, user string) int {
		r := httptest.NewRequest("GET", path, nil)
		if user != "" {
			r.Header.Set("X-User", user)
		}
		w := httptest.NewRecorder()
		func() {
			defer func() { recover() }()
			h.ServeHTTP(w, r)
		}()
		return w.Code
	}
	codes := []int{serve("/", "ann"), serve("/fail", "ann"), serve("/silent", "ann"), serve("/", "ann"), serve("/", "")}
	if fmt.Sprint(codes) != "[200 503 200 429 400]" {
		t.Fatalf("statuses %v", codes)
	}
	serve("/panic", "bob")
	m.SetFeedback(nil)
	serve("/", "bob")
	want := "[200/7ms 503/7ms 200/7ms 500/7ms]"
	if fmt.Sprint(fb.got) != want {
		t.Errorf("feedback %v, want %s (handled requests only, a panic as 500)", fb.got, want)
	}
}

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

// feedbackMiddleware returns a middleware with one policy that allows
// everything, and the recorder it feeds.
func feedbackMiddleware(t *testing.T) (*middleware.Middleware, *feedbackRecorder) {
	t.Helper()
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	p := policy.Must(policy.New("global", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1000, Window: time.Hour},
		keyfunc.Global()))
	m := middleware.MustNew(store, []*policy.Policy{p}, middleware.WithClock(clock))
	fb := &feedbackRecorder{}
	m.SetFeedback(fb)
	return m, fb
}

// TestFeedbackKeepsWriterInterfaces: with a Feedback set, the handler
// still sees the optional interfaces of the writer it would have been
// given (Hijacker and io.ReaderFrom over HTTP/1, Pusher over HTTP/2), and
// none the writer lacks; http.ResponseController still reports a writer
// that cannot flush.
func TestFeedbackKeepsWriterInterfaces(t *testing.T) {
	m, _ := feedbackMiddleware(t)
	type caps struct{ hijacker, pusher, readerFrom bool }
	var got caps
	var flushErr error
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, got.hijacker = w.(http.Hijacker)
		_, got.pusher = w.(http.Pusher)
		_, got.readerFrom = w.(io.ReaderFrom)
		if p, ok := w.(http.Pusher); ok {
			p.Push("/style.css", nil)
		}
		flushErr = http.NewResponseController(w).Flush()
		io.Copy(w, struct{ io.Reader }{strings.NewReader("body")})
	}))

	w1 := &http1Writer{}
	h.ServeHTTP(w1, httptest.NewRequest("GET", "/", nil))
	if want := (caps{hijacker: true, readerFrom: true}); got != want || flushErr != nil || w1.readFrom != 1 || w1.body.String() != "body" {
		t.Errorf("HTTP/1 writer: handler saw %+v (flush %v, ReadFrom called %d times, body %q); want %+v, a flush, ReadFrom once",
			got, flushErr, w1.readFrom, w1.body.String(), want)
	}

	w2 := &http2Writer{}
	h.ServeHTTP(w2, httptest.NewRequest("GET", "/", nil))
	if want := (caps{pusher: true}); got != want || flushErr != nil || fmt.Sprint(w2.pushed) != "[/style.css]" {
		t.Errorf("HTTP/2 writer: handler saw %+v (flush %v, pushed %v); want %+v, a flush, /style.css pushed", got, flushErr, w2.pushed, want)
	}

	wb := &bareWriter{}
	h.ServeHTTP(wb, httptest.NewRequest("GET", "/", nil))
	if want := (caps{}); got != want || !errors.Is(flushErr, http.ErrNotSupported) || wb.body.String() != "body" {
		t.Errorf("bare writer: handler saw %+v (flush %v, body %q); want %+v and http.ErrNotSupported", got, flushErr, wb.body.String(), want)
	}
}

// TestFeedbackHijacked: a connection the handler hijacks (a WebSocket)
// works through a middleware with a Feedback, and is not reported: its
// "latency" would be the connection's life, and its status none.
func TestFeedbackHijacked(t *testing.T) {
	m, fb := feedbackMiddleware(t)
	served := make(chan struct{}) // closed once the middleware returned
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
	}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(served)
		h.ServeHTTP(w, r)
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
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if len(fb.got) != 0 {
		t.Errorf("feedback %v for a hijacked connection, want none", fb.got)
	}
}

// TestSetFeedbackUnderTraffic: SetFeedback may be called while requests
// are served (run with -race); every request passed on is reported to the
// Feedback loaded when it started, or to none.
func TestSetFeedbackUnderTraffic(t *testing.T) {
	m, fb := feedbackMiddleware(t)
	m.SetFeedback(nil)
	h := m.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	const workers, each = 4, 200
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
			}
		})
	}
	for i := range 100 {
		if i%2 == 0 {
			m.SetFeedback(fb)
		} else {
			m.SetFeedback(nil)
		}
	}
	wg.Wait()
	m.SetFeedback(fb)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if n := len(fb.got); n < 1 || n > workers*each+1 {
		t.Errorf("%d reports, want 1 to %d", n, workers*each+1)
	}
}
