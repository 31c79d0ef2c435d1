package timing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// lockedRecorder is a recorder safe to fill from a server's goroutines.
type lockedRecorder struct {
	mu  sync.Mutex
	got []string
}

func (r *lockedRecorder) Observe(latency time.Duration, status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, fmt.Sprintf("%d/%v", status, latency))
}

func (r *lockedRecorder) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Sprint(r.got)
}

// cancelCase is a handler served through Serve on a real server, with
// what Serve must report for it.
type cancelCase struct {
	name string
	// leaves: the client cancels its request once the handler has
	// begun (started), and the handler ends after the server saw it go.
	leaves bool
	// wrap, when not nil, wraps the handler that calls Serve (a
	// middleware further out: a server-side deadline, a cancellation of
	// the server's own).
	wrap func(http.Handler) http.Handler
	// app is the handler Serve times; it sends on started once it is
	// running (or its backend is), and moves clock on by 7ms.
	app  func(t *testing.T, clock *algotest.Clock, started chan<- struct{}) http.Handler
	want string
	// server, when not nil, configures the server before it starts.
	server func(*http.Server)
}

// serveOnce serves one GET of tc through Serve on a real server (HTTP/2
// over TLS when h2 is set, HTTP/1.1 otherwise) and returns what Serve
// reported once the handler has ended. No sleep: the client cancels once
// the handler said it started, and the report is read once Serve returned.
// A request that ends before its handler began fails t (it waited for the
// handler's start for ever).
func serveOnce(t *testing.T, h2 bool, tc cancelCase) string {
	t.Helper()
	got, err := tryServeOnce(t, h2, tc)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// tryServeOnce is serveOnce, returning an error instead of what Serve
// reported when the request ended before its handler began (the
// connection failed, or the server answered without calling it).
func tryServeOnce(t *testing.T, h2 bool, tc cancelCase) (string, error) {
	t.Helper()
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	rec := &lockedRecorder{}
	started := make(chan struct{}, 1)
	ended := make(chan struct{})
	var h http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(ended) // also when the handler panics (net/http recovers it)
		Serve(w, r, tc.app(t, clock, started), clock, rec)
	})
	if tc.wrap != nil {
		h = tc.wrap(h)
	}
	srv, client := startServer(h2, h, tc.server)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	replied := make(chan error, 1)
	go func() {
		resp, err := client.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		replied <- err
	}()
	var clientErr error
	answered := false
	select {
	case <-started:
	case clientErr = <-replied:
		answered = true
		select {
		case <-started: // it began: its reply came first to the test
		default:
			return "", fmt.Errorf("the request ended before its handler began: client: %v", clientErr)
		}
	}
	if tc.leaves {
		cancel() // the client hangs up
	}
	<-ended
	if !answered {
		clientErr = <-replied
	}
	if tc.leaves != errors.Is(clientErr, context.Canceled) {
		t.Fatalf("client: %v (left: %v)", clientErr, tc.leaves)
	}
	return rec.String(), nil
}

// untilDone is an app that starts, moves the clock on by 7ms, waits for
// its request's context to end (its client gone, a deadline passed) and
// answers as w does, with the context's error.
func untilDone(answer func(w http.ResponseWriter, err error)) func(*testing.T, *algotest.Clock, chan<- struct{}) http.Handler {
	return func(_ *testing.T, clock *algotest.Clock, started chan<- struct{}) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			started <- struct{}{}
			clock.Advance(7 * time.Millisecond)
			<-r.Context().Done()
			answer(w, r.Context().Err())
		})
	}
}

// internalOnCanceled answers as handlers commonly do when their database
// call returns the context's error: 500.
func internalOnCanceled(w http.ResponseWriter, err error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		http.Error(w, "query: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Write([]byte("ok"))
}

// errServerStopping is the cause a server of the tests cancels its
// requests with.
var errServerStopping = errors.New("server stopping")

// TestServeClientCancelled: a request whose client went away (net/http
// cancels its context, with no other cause, as the connection closes or
// the HTTP/2 stream is reset) before its handler ended is not reported,
// whatever the handler answered on its way out: the 500 of a handler whose
// database call returned context.Canceled, the 502 of a reverse proxy whose
// backend call was cancelled, a 200. Its status reached no one, and its
// latency is the client's patience, not the service's time (Netflix's
// concurrency-limits ignores a cancelled call, Envoy's adaptive
// concurrency takes no sample of a request reset before its response
// ended). Serve reported them all (only a panic after the client left was
// skipped), so a burst of clients hanging up looked like a failing service
// to the adaptive controller. A server-side deadline that ran out, or a
// cancellation the server made with a cause of its own, is the server's
// doing: reported; so is a 500 while the client is there.
func TestServeClientCancelled(t *testing.T) {
	for _, tc := range []cancelCase{
		{name: "500 on context.Canceled, client gone", leaves: true, app: untilDone(internalOnCanceled), want: "[]"},
		{name: "200 after the client left", leaves: true, app: untilDone(func(w http.ResponseWriter, _ error) {
			w.Write([]byte("done anyway"))
		}), want: "[]"},
		{name: "reverse proxy 502, client gone", leaves: true, app: func(t *testing.T, clock *algotest.Clock, started chan<- struct{}) http.Handler {
			backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				started <- struct{}{}
				clock.Advance(7 * time.Millisecond)
				<-r.Context().Done() // the proxy cancelled its call
			}))
			t.Cleanup(backend.Close)
			u, err := url.Parse(backend.URL)
			if err != nil {
				t.Fatal(err)
			}
			proxy := httputil.NewSingleHostReverseProxy(u)
			proxy.ErrorLog = log.New(io.Discard, "", 0)
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				sw := &statusSeen{ResponseWriter: w}
				proxy.ServeHTTP(sw, r)
				if sw.status != http.StatusBadGateway {
					t.Errorf("proxy answered %d, want 502", sw.status)
				}
			})
		}, want: "[]"},
		{name: "500, client there", app: func(_ *testing.T, clock *algotest.Clock, started chan<- struct{}) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				started <- struct{}{}
				clock.Advance(7 * time.Millisecond)
				http.Error(w, "down", http.StatusInternalServerError)
			})
		}, want: "[500/7ms]"},
		{name: "server-side deadline passed", wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ctx, cancel := context.WithDeadline(r.Context(), time.Unix(0, 0)) // already passed
				defer cancel()
				h.ServeHTTP(w, r.WithContext(ctx))
			})
		}, app: untilDone(internalOnCanceled), want: "[500/7ms]"},
		{name: "server's own cancellation, with a cause", wrap: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ctx, cancel := context.WithCancelCause(r.Context())
				cancel(errServerStopping)
				h.ServeHTTP(w, r.WithContext(ctx))
			})
		}, app: untilDone(internalOnCanceled), want: "[500/7ms]"},
	} {
		for _, h2 := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/h2=%v", tc.name, h2), func(t *testing.T) {
				if got := serveOnce(t, h2, tc); got != tc.want {
					t.Errorf("reported %s, want %s", got, tc.want)
				}
			})
		}
	}
}

// statusSeen records the status written through it.
type statusSeen struct {
	http.ResponseWriter
	status int
}

func (w *statusSeen) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusSeen) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// TestServeHTTP2WriteTimeout: over HTTP/2, net/http enforces the server's
// WriteTimeout by resetting the stream and cancelling the request's
// context, with no cause, just as it does when the client resets it. A
// handler that ran past the time the server gives it (here one that
// answers 500 when its query returns the context's error) is the
// service's doing, reported as a server-side deadline is: it is no client
// gone. (The app moves the test's clock on by the real time it waited, as
// the system clock would have moved.)
//
// net/http bounds a connection's TLS handshake by the least of the
// server's timeouts, here the WriteTimeout, which a loaded machine under
// -race can outlast: the connection then fails before the request reaches
// the handler, which tells nothing of Serve, and the test makes it again
// (up to tries times; the test waited for the handler's start for ever).
func TestServeHTTP2WriteTimeout(t *testing.T) {
	const timeout = 100 * time.Millisecond
	const tries = 20
	tc := cancelCase{
		server: func(s *http.Server) { s.WriteTimeout = timeout },
		app: func(_ *testing.T, clock *algotest.Clock, started chan<- struct{}) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				began := time.Now()
				started <- struct{}{}
				<-r.Context().Done() // the server's WriteTimeout: nothing else ends it
				clock.Advance(time.Since(began))
				internalOnCanceled(w, r.Context().Err())
			})
		},
	}
	var got string
	for try := 1; ; try++ {
		var err error
		if got, err = tryServeOnce(t, true, tc); err == nil {
			break
		}
		if try == tries {
			t.Fatalf("try %d: %v", try, err)
		}
		t.Logf("try %d: %v; again", try, err)
	}
	status, latency, ok := strings.Cut(strings.Trim(got, "[]"), "/")
	d, err := time.ParseDuration(latency)
	if !ok || status != "500" || err != nil || d < timeout {
		t.Errorf("reported %s, want one 500 of at least the WriteTimeout, %v", got, timeout)
	}
}
