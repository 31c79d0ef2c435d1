package timing

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// slowWriter is net/http's HTTP/1 writer to a client that reads its
// response slowly: every Write, Flush and ReadFrom takes lag on clock
// (the handler blocked on the connection meanwhile).
type slowWriter struct {
	http1Writer
	clock *algotest.Clock
	lag   time.Duration
}

func (w *slowWriter) Write(b []byte) (int, error) {
	w.clock.Advance(w.lag)
	return w.http1Writer.Write(b)
}

func (w *slowWriter) Flush() { w.clock.Advance(w.lag) }

func (w *slowWriter) ReadFrom(r io.Reader) (int64, error) {
	w.clock.Advance(w.lag)
	return w.http1Writer.ReadFrom(r)
}

// slowBody is a request body its client sends slowly: every Read and
// the Close (which drains what is left, as net/http's HTTP/1 body does)
// take lag on clock. When in is not nil, each Read first sends on it and
// waits for out.
type slowBody struct {
	io.Reader
	clock   *algotest.Clock
	lag     time.Duration
	in, out chan struct{}
}

func (b *slowBody) Read(p []byte) (int, error) {
	if b.in != nil {
		b.in <- struct{}{}
		<-b.out
	}
	b.clock.Advance(b.lag)
	return b.Reader.Read(p)
}

func (b *slowBody) Close() error {
	b.clock.Advance(b.lag)
	return nil
}

// backend is a source the handler copies its response from (a backend's
// body): every Read takes lag on clock, the service's own time.
type backend struct {
	r     io.Reader
	clock *algotest.Clock
	lag   time.Duration
}

func (b *backend) Read(p []byte) (int, error) {
	b.clock.Advance(b.lag)
	return b.r.Read(p)
}

// serveSlowClient serves h through Serve to a slow client (each read of
// its body and write of its response takes 10 s) on a clock the handler
// moves on by 7ms of its own first, and returns what was reported.
func serveSlowClient(t *testing.T, body string, h func(*algotest.Clock, http.ResponseWriter, *http.Request)) string {
	t.Helper()
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	rec := &recorder{}
	w := &slowWriter{clock: clock, lag: 10 * time.Second}
	r := httptest.NewRequest("POST", "/", nil)
	r.Body = &slowBody{Reader: strings.NewReader(body), clock: clock, lag: 10 * time.Second}
	Serve(w, r, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clock.Advance(7 * time.Millisecond)
		h(clock, w, r)
	}), clock, rec)
	return fmt.Sprint(rec.got)
}

// TestServeTimesTheServiceNotItsClient: the latency Serve reports is the
// handler's own time, not the time it spends blocked on its client:
// reading the request body (a client trickling an upload), closing it
// (draining what is left), writing and flushing the response (a client
// reading slowly) or sending a file through ReadFrom (sendfile); the time
// it spends reading what it copies to the client (a backend's body) is
// its own. Serve reported the time from start to end: one client
// trickling its uploads or reading its downloads slowly made requests as
// slow as it pleased, a sign of trouble to the adaptive controller
// (which lowers every client's limit when the p99 is slow and the errors
// many) that the service was not in.
func TestServeTimesTheServiceNotItsClient(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("a file's contents"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		h    func(*algotest.Clock, http.ResponseWriter, *http.Request)
		want string
	}{
		{"upload trickled", func(_ *algotest.Clock, w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // two reads: the data, then EOF
		}, "[200/7ms]"},
		{"body drained on close", func(_ *algotest.Clock, w http.ResponseWriter, r *http.Request) {
			r.Body.Close()
		}, "[200/7ms]"},
		{"response read slowly", func(_ *algotest.Clock, w http.ResponseWriter, r *http.Request) {
			for range 3 {
				w.Write([]byte("chunk"))
			}
		}, "[200/7ms]"},
		{"flushed to a slow client", func(_ *algotest.Clock, w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("event"))
			http.NewResponseController(w).Flush()
		}, "[200/7ms]"},
		{"file sent (ReadFrom)", func(_ *algotest.Clock, w http.ResponseWriter, r *http.Request) {
			f, err := os.Open(file)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Close()
			http.ServeContent(w, r, "file", time.Time{}, f) // a LimitedReader of the file
		}, "[200/7ms]"},
		{"copied from a backend", func(clock *algotest.Clock, w http.ResponseWriter, r *http.Request) {
			// Three reads of 5ms (two chunks, then EOF): its own time;
			// the two writes, the client's.
			src := &backend{r: io.MultiReader(strings.NewReader("first"), strings.NewReader("second")), clock: clock, lag: 5 * time.Millisecond}
			io.Copy(w, src)
		}, "[200/22ms]"},
		{"its own slow work", func(clock *algotest.Clock, w http.ResponseWriter, r *http.Request) {
			clock.Advance(10 * time.Second)
			w.Write([]byte("done"))
		}, "[200/10.007s]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := serveSlowClient(t, "an upload", tc.h); got != tc.want {
				t.Errorf("reported %s, want %s", got, tc.want)
			}
		})
	}
}

// TestServeTimesConcurrentWaitsOnce: a handler that reads its body on
// another goroutine while it writes (full duplex, a reverse proxy's
// transport) waits on its client while either is in progress: the time
// both are is taken off once, not twice (which would report less than
// its own time, down to nothing).
func TestServeTimesConcurrentWaitsOnce(t *testing.T) {
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	rec := &recorder{}
	w := &slowWriter{clock: clock, lag: 10 * time.Second}
	in, out := make(chan struct{}), make(chan struct{})
	r := httptest.NewRequest("POST", "/", nil)
	r.Body = &slowBody{Reader: strings.NewReader("x"), clock: clock, lag: 10 * time.Second, in: in, out: out}
	Serve(w, r, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clock.Advance(7 * time.Millisecond)
		read := make(chan struct{})
		go func() {
			defer close(read)
			var b [8]byte
			r.Body.Read(b[:]) // 10 s, begun before the write and ended after
		}()
		<-in
		w.Write([]byte("early answer")) // 10 s, within the read
		close(out)
		<-read
		clock.Advance(3 * time.Millisecond)
	}), clock, rec)
	if got, want := fmt.Sprint(rec.got), "[200/10ms]"; got != want {
		t.Errorf("reported %s, want %s", got, want)
	}
}

// TestServeTrackerNotInFlightWhileWaitingOnTheClient: a request blocked
// on its client (reading its body, writing its response) is no request
// of the service's in flight: a Tracker is told it ended as the wait
// begins and began again as it ends, so that a client holding requests
// open (trickling uploads, reading slowly) does not pass them for a
// hang. It was in flight all along.
func TestServeTrackerNotInFlightWhileWaitingOnTheClient(t *testing.T) {
	tr := &tracker{}
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	r := httptest.NewRequest("POST", "/", nil)
	r.Body = &slowBody{Reader: strings.NewReader("x"), clock: clock, lag: 10 * time.Second}
	Serve(&slowWriter{clock: clock, lag: 10 * time.Second}, r, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr.calls = append(tr.calls, "handler")
		var b [8]byte
		r.Body.Read(b[:])
		tr.calls = append(tr.calls, "read")
		w.Write([]byte("ok"))
		tr.calls = append(tr.calls, "written")
	}), clock, tr)
	want := "begin handler end begin read end begin written observe 200 end"
	if got := strings.Join(tr.calls, " "); got != want {
		t.Errorf("calls %q, want %q", got, want)
	}
}

// TestServeWriteTimeoutOutlastedByItsOwnTime: a request whose client went
// away as net/http sees it (over HTTP/2 the server's WriteTimeout resets
// the stream as a client's reset does; over HTTP/1 a write that fails,
// its deadline passed, cancels the context too) is reported when the
// handler's own time reached the WriteTimeout: the service ran out of the
// time the server gives it. Not when what ran it out was a client reading
// slowly: a reverse proxy panics when its copy to the client fails, and
// Serve reported a 500 as long as the WriteTimeout, a slow failure one
// client could have at will.
func TestServeWriteTimeoutOutlastedByItsOwnTime(t *testing.T) {
	for _, tc := range []struct {
		name string
		own  time.Duration
		want string
	}{
		{"slow client", 7 * time.Millisecond, "[]"},
		{"slow service", 31 * time.Second, "[500/31s]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
			rec := &recorder{}
			ctx, cancel := context.WithCancel(context.WithValue(context.Background(), http.ServerContextKey, &http.Server{WriteTimeout: 30 * time.Second}))
			defer cancel()
			r := httptest.NewRequest("GET", "/", nil).WithContext(ctx)
			func() {
				defer func() { recover() }()
				Serve(&slowWriter{clock: clock, lag: 10 * time.Second}, r, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					clock.Advance(tc.own)
					for range 4 {
						w.Write([]byte("a large response")) // 40 s in all to a slow client
					}
					cancel() // the WriteTimeout passed
					panic(http.ErrAbortHandler)
				}), clock, rec)
			}()
			if got := fmt.Sprint(rec.got); got != tc.want {
				t.Errorf("reported %s, want %s", got, tc.want)
			}
		})
	}
}

// TestServeClientWaitsAllocateNothing: timing the waits on the client
// costs no allocation: Serve of a request whose handler reads its body,
// writes, flushes and copies a reader to it allocates only its writer, as
// before.
func TestServeClientWaitsAllocateNothing(t *testing.T) {
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	body := strings.NewReader("")
	r := httptest.NewRequest("POST", "/", nil)
	src := strings.NewReader("")
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b [16]byte
		r.Body.Read(b[:])
		w.Write(b[:])
		w.(http.Flusher).Flush()
		src.Reset("a backend's body, longer than the handler's buffer")
		io.Copy(w, struct{ io.Reader }{src}) // neither a file nor a WriterTo
	})
	var mu sync.Mutex
	run := func(serve func(w http.ResponseWriter, r *http.Request)) float64 {
		w := &http1Writer{}
		return testing.AllocsPerRun(200, func() {
			mu.Lock()
			defer mu.Unlock()
			body.Reset("an upload")
			r.Body = io.NopCloser(body)
			w.body.Reset()
			serve(w, r)
		})
	}
	bare := run(h)
	served := run(func(w http.ResponseWriter, r *http.Request) { Serve(w, r, h, clock, nopObserver{}) })
	if served > bare+1 {
		t.Errorf("Serve: %v allocations, want at most %v (the handler's and Serve's writer)", served, bare+1)
	}
}

// nopObserver is an Observer that records nothing.
type nopObserver struct{}

func (nopObserver) Observe(time.Duration, int) {}

// TestServeUploadDroppedNotReported: a client that goes away in the
// middle of its upload makes its handler's read fail, and a handler that
// answers that with a 500 (as many do for a body they could not read; a
// reverse proxy answers 502) is no failure of the service's: net/http
// cancels the request's context as a read from the connection fails
// (HTTP/1) or the stream is reset (HTTP/2), and Serve reports nothing,
// as for any client gone. The whole upload is reported.
func TestServeUploadDroppedNotReported(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		for _, drop := range []bool{true, false} {
			t.Run(fmt.Sprintf("h2=%v/dropped=%v", h2, drop), func(t *testing.T) {
				clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
				rec := &lockedRecorder{}
				started := make(chan struct{}, 1)
				ended := make(chan struct{})
				srv, client := startServer(h2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					defer close(ended)
					Serve(w, r, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						clock.Advance(7 * time.Millisecond)
						var first [5]byte
						if _, err := io.ReadFull(r.Body, first[:]); err != nil {
							t.Errorf("first part: %v", err)
						}
						started <- struct{}{}
						if _, err := io.Copy(io.Discard, r.Body); err != nil {
							http.Error(w, "upload failed", http.StatusInternalServerError)
						}
					}), clock, rec)
				}), nil)
				defer srv.Close()
				pr, pw := io.Pipe()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				req, err := http.NewRequestWithContext(ctx, "POST", srv.URL, pr)
				if err != nil {
					t.Fatal(err)
				}
				req.ContentLength = 10
				replied := make(chan error, 1)
				go func() {
					resp, err := client.Do(req)
					if err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					replied <- err
				}()
				pw.Write([]byte("first"))
				<-started
				if drop {
					cancel() // the client goes away mid-upload
					pw.CloseWithError(io.ErrClosedPipe)
				} else {
					pw.Write([]byte("-rest"))
					pw.Close()
				}
				<-ended
				if err := <-replied; drop != (err != nil) {
					t.Fatalf("client: %v (dropped: %v)", err, drop)
				}
				want := "[200/7ms]"
				if drop {
					want = "[]"
				}
				if got := rec.String(); got != want {
					t.Errorf("reported %s, want %s", got, want)
				}
			})
		}
	}
}
