package adaptive_test

import (
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

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// slowConns is the server's side of the connections of slow clients, on
// clock: a request with a Slow header has each Read of its body and each
// Write of its response take that long (its handler blocked on the
// client meanwhile: an upload trickled, a response read slowly). When
// blocked is not nil, each such Read and Write first sends on it and
// waits for release to be closed.
type slowConns struct {
	clock            *algotest.Clock
	blocked, release chan struct{}
}

func (c *slowConns) wait(lag time.Duration) {
	if c.blocked != nil {
		c.blocked <- struct{}{}
		<-c.release
	}
	c.clock.Advance(lag)
}

// wrap is the connections under h: put it outermost, where the server is.
func (c *slowConns) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lag, err := time.ParseDuration(r.Header.Get("Slow"))
		if err != nil {
			h.ServeHTTP(w, r)
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &slowClientBody{ReadCloser: r.Body, c: c, lag: lag}
		}
		h.ServeHTTP(&slowClientWriter{ResponseWriter: w, c: c, lag: lag}, r)
	})
}

type slowClientBody struct {
	io.ReadCloser
	c   *slowConns
	lag time.Duration
}

func (b *slowClientBody) Read(p []byte) (int, error) {
	b.c.wait(b.lag)
	return b.ReadCloser.Read(p)
}

type slowClientWriter struct {
	http.ResponseWriter
	c   *slowConns
	lag time.Duration
}

func (w *slowClientWriter) Write(p []byte) (int, error) {
	w.c.wait(w.lag)
	return w.ResponseWriter.Write(p)
}

// filesApp is an application of uploads and downloads on clock: each
// request takes 10ms of its own (?work=d: d), reads its body whole and
// answers 200 with ?chunks=n writes of 1 KiB; ?fail answers 503 (the
// service's own failure); ?hang sends on hanging and waits for hang to be
// closed.
func filesApp(clock *algotest.Clock, hanging chan<- struct{}, hang <-chan struct{}) http.Handler {
	chunk := make([]byte, 1024)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		work := 10 * time.Millisecond
		if d, err := time.ParseDuration(q.Get("work")); err == nil {
			work = d
		}
		clock.Advance(work)
		if q.Has("hang") {
			hanging <- struct{}{}
			<-hang
		}
		if q.Has("fail") {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			http.Error(w, "upload failed", http.StatusInternalServerError)
			return
		}
		var n int
		fmt.Sscan(q.Get("chunks"), &n)
		for range n {
			w.Write(chunk)
		}
	})
}

// filesRig is a Controller of a middleware (one policy of 1000 a minute
// per IP) that serves filesApp to slow clients, wired as wiring says:
// "Handler" (Controller.Handler inside the middleware), or
// "SetFeedback/ServeMux" and "SetFeedback/chi" (routed).
type filesRig struct {
	t             *testing.T
	clock         *algotest.Clock
	c             *adaptive.Controller
	m             *middleware.Middleware
	conns         *slowConns
	h             http.Handler
	hanging, hang chan struct{}
}

func newFilesRig(t *testing.T, wiring string, cfg adaptive.Config) *filesRig {
	t.Helper()
	clock := algotest.NewClock(t0)
	p := policy.Must(policy.New("p0", algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 1000, Window: time.Minute}, ip))
	m := clockedMiddleware(t, clock, []*policy.Policy{p})
	cfg.Clock = clock
	c, err := adaptive.New(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rig := &filesRig{t: t, clock: clock, c: c, m: m, conns: &slowConns{clock: clock},
		hanging: make(chan struct{}), hang: make(chan struct{})}
	app := filesApp(clock, rig.hanging, rig.hang)
	var h http.Handler
	switch wiring {
	case "Handler":
		h = m.Handler(c.Handler(app))
	case "SetFeedback/ServeMux":
		m.SetFeedback(c)
		mux := http.NewServeMux()
		mux.Handle("/", m.Handler(app))
		h = mux
	case "SetFeedback/chi":
		m.SetFeedback(c)
		r := chi.NewRouter()
		r.Use(m.Handler)
		r.Handle("/", app)
		h = r
	default:
		t.Fatalf("wiring %q", wiring)
	}
	rig.h = rig.conns.wrap(h)
	return rig
}

var wirings = []string{"Handler", "SetFeedback/ServeMux", "SetFeedback/chi"}

// serve serves one request of method to target with body (none if
// empty), from a client as slow as slow ("" for one that is not), and
// fails the test unless it is answered want.
func (rig *filesRig) serve(method, target, body, slow string, want int) {
	rig.t.Helper()
	var r *http.Request
	if body != "" {
		r = httptest.NewRequest(method, target, strings.NewReader(body))
	} else {
		r = httptest.NewRequest(method, target, nil)
	}
	if slow != "" {
		r.Header.Set("Slow", slow)
	}
	w := httptest.NewRecorder()
	rig.h.ServeHTTP(w, r)
	if w.Code != want {
		rig.t.Fatalf("%s %s: %d, want %d", method, target, w.Code, want)
	}
}

// normal serves n requests of 10ms from clients that are not slow, the
// first errs of them failing (503).
func (rig *filesRig) normal(n, errs int) {
	rig.t.Helper()
	for i := range n {
		if i < errs {
			rig.serve("GET", "/?fail", "", "", http.StatusServiceUnavailable)
		} else {
			rig.serve("GET", "/", "", "", http.StatusOK)
		}
	}
}

// endPeriod moves the clock to the end of the period begun at start (one
// minute) and evaluates it.
func (rig *filesRig) endPeriod(start time.Time) {
	rig.t.Helper()
	rig.clock.Advance(start.Add(time.Minute).Sub(rig.clock.Now()))
	if err := rig.c.Evaluate(); err != nil {
		rig.t.Fatal(err)
	}
}

// slowRequests are what one client does to be slow, three times over:
// uploads it trickles, downloads it reads slowly; and, for comparison,
// requests the service itself takes 1 s over.
var slowRequests = []struct {
	name                 string
	method, target, body string
	slow                 string
}{
	{"uploads trickled", "POST", "/", "an upload", "1s"},
	{"downloads read slowly", "GET", "/?chunks=3", "", "1s"},
	{"the service slow", "GET", "/?work=1s", "", ""},
}

// TestSlowClientsDoNotLower: a service failing a little (3 503s in 203
// requests, more than 1%) but not slow holds the level where it is. One
// client that trickled three uploads or read three downloads slowly (1 s
// a read or write) made the period slow too, its p99 theirs, and
// lowered every client's limit to 80%: the latency was the time the
// handler spent blocked on that client. It is the service's own time now
// (10ms): the level holds. The service taking 1 s itself still lowers
// it. Through Controller.Handler and SetFeedback (ServeMux, chi).
func TestSlowClientsDoNotLower(t *testing.T) {
	for _, wiring := range wirings {
		for _, sr := range slowRequests {
			t.Run(wiring+"/"+sr.name, func(t *testing.T) {
				rig := newFilesRig(t, wiring, adaptive.Config{Baseline: 10 * time.Millisecond})
				rig.normal(200, 3)
				for range 3 {
					rig.serve(sr.method, sr.target, sr.body, sr.slow, http.StatusOK)
				}
				rig.endPeriod(t0)
				want, wantLimits := 1.0, "1000"
				if sr.slow == "" {
					want, wantLimits = 0.8, "800"
				}
				if rig.c.Level() != want || limitsOf(rig.m) != wantLimits {
					t.Errorf("after 200 requests (3 failing) and 3 %s: level %v, limits %s; want %v, %s",
						sr.name, rig.c.Level(), limitsOf(rig.m), want, wantLimits)
				}
			})
		}
	}
}

// TestSlowClientsDoNotRaiseTheBaseline: a learned baseline follows a
// period slow but not failing an eighth of the way to the threshold it
// exceeded (so that a p99 that settled higher becomes the normal). One
// client trickling three uploads a minute (1 s a read, against a service
// answering in 10ms) made every period slow: in ten minutes the baseline
// rose from 10.5ms to 34ms, and the service then three times slower
// (30ms) and failing 5% was not lowered. The baseline is learned from
// the service's own time now: it stays, and the trouble lowers the
// limit.
func TestSlowClientsDoNotRaiseTheBaseline(t *testing.T) {
	for _, wiring := range wirings {
		t.Run(wiring, func(t *testing.T) {
			rig := newFilesRig(t, wiring, adaptive.Config{})
			start := t0
			rig.normal(200, 0)
			rig.endPeriod(start)
			learned := rig.c.Baseline()
			for range 10 {
				start = start.Add(time.Minute)
				rig.normal(200, 0)
				for range 3 {
					rig.serve("POST", "/", "an upload", "1s", http.StatusOK)
				}
				rig.endPeriod(start)
			}
			if got := rig.c.Baseline(); got != learned {
				t.Errorf("baseline after ten minutes of trickled uploads: %v, want %v (learned before)", got, learned)
			}
			start = start.Add(time.Minute)
			for i := range 200 {
				if i < 10 {
					rig.serve("GET", "/?fail&work=30ms", "", "", http.StatusServiceUnavailable)
				} else {
					rig.serve("GET", "/?work=30ms", "", "", http.StatusOK)
				}
			}
			rig.endPeriod(start)
			if rig.c.Level() != 0.8 || limitsOf(rig.m) != "800" {
				t.Errorf("the service three times slower and failing 5%%: level %v, limits %s; want 0.8, 800 (baseline %v)",
					rig.c.Level(), limitsOf(rig.m), rig.c.Baseline())
			}
		})
	}
}

// TestSlowClientsDoNotHoldTheLevel: a request in flight past the
// threshold at a period's end is a slow sample of it (a hang), and
// MinSamples of them hold a lowered level. One client keeping 25
// uploads trickling, or 25 downloads it reads slowly, across the
// periods held the level down for as long as it liked, the service
// healthy: a request blocked on its client is not in flight for the
// service now, and the level climbs back. 25 requests hung in the
// service itself still hold it.
func TestSlowClientsDoNotHoldTheLevel(t *testing.T) {
	for _, wiring := range wirings {
		for _, held := range []struct {
			name                 string
			method, target, body string
			slow                 string
		}{
			{"uploads trickled", "POST", "/", "an upload", "1s"},
			{"downloads read slowly", "GET", "/?chunks=1", "", "1s"},
			{"the service hung", "GET", "/?hang", "", ""},
		} {
			t.Run(wiring+"/"+held.name, func(t *testing.T) {
				rig := newFilesRig(t, wiring, adaptive.Config{Baseline: 10 * time.Millisecond})
				start := t0
				rig.normal(200, 3)
				rig.serve("GET", "/?work=1s&fail", "", "", http.StatusServiceUnavailable)
				rig.serve("GET", "/?work=1s", "", "", http.StatusOK)
				rig.serve("GET", "/?work=1s", "", "", http.StatusOK)
				rig.endPeriod(start)
				if rig.c.Level() != 0.8 {
					t.Fatalf("after a slow and failing period: level %v, want 0.8", rig.c.Level())
				}

				// 25 requests, blocked on their client (or hung in
				// the service) until released.
				rig.conns.blocked, rig.conns.release = make(chan struct{}), make(chan struct{})
				var wg sync.WaitGroup
				for range 25 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var r *http.Request
						if held.body != "" {
							r = httptest.NewRequest(held.method, held.target, strings.NewReader(held.body))
						} else {
							r = httptest.NewRequest(held.method, held.target, nil)
						}
						if held.slow != "" {
							r.Header.Set("Slow", held.slow)
						}
						rig.h.ServeHTTP(httptest.NewRecorder(), r)
					}()
				}
				for range 25 {
					if held.slow != "" {
						hangguard.Await(t, rig.conns.blocked, 10*time.Second, "a request blocked on its client")
					} else {
						hangguard.Await(t, rig.hanging, 10*time.Second, "a request hung in the service")
					}
				}
				var got []float64
				for range 3 {
					start = start.Add(time.Minute)
					rig.conns.blocked = nil // the normal requests are not held
					rig.normal(100, 0)
					rig.endPeriod(start)
					got = append(got, rig.c.Level())
				}
				close(rig.conns.release)
				close(rig.hang)
				wg.Wait()
				want := []float64{0.9, 1, 1}
				if held.slow == "" {
					want = []float64{0.8, 0.8, 0.8}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("three healthy periods with 25 %s: levels %v, want %v", held.name, got, want)
				}
			})
		}
	}
}

// TestProxiedUploadsLeaveNothingInFlight: a request whose body a reverse
// proxy's transport reads on its own goroutine, while the handler waits
// for the backend and writes its answer (or after it has returned, when
// the backend answered before reading it all), waits on its client on
// two goroutines at once; each wait ends its span and begins it again.
// Through real servers (HTTP/1 and HTTP/2, chi, SetFeedback, MinSamples
// 1: one request left in flight would hold the level), uploads of 256
// KiB that the backend reads whole or answers at once (413) leave none
// in flight: once they are over, each period climbs a step. Run under
// -race.
func TestProxiedUploadsLeaveNothingInFlight(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		t.Run(fmt.Sprintf("h2=%v", h2), func(t *testing.T) {
			clock := algotest.NewClock(t0)
			p := policy.Must(policy.New("p0", algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 1_000_000, Window: time.Minute}, ip))
			m := clockedMiddleware(t, clock, []*policy.Policy{p})
			c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond, MinSamples: 1})
			if err != nil {
				t.Fatal(err)
			}
			m.SetFeedback(c)
			backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Has("early") {
					http.Error(w, "too large", http.StatusRequestEntityTooLarge)
					return
				}
				io.Copy(io.Discard, r.Body)
			}))
			defer backend.Close()
			u, err := url.Parse(backend.URL)
			if err != nil {
				t.Fatal(err)
			}
			proxy := httputil.NewSingleHostReverseProxy(u)
			proxy.ErrorLog = log.New(io.Discard, "", 0)
			r := chi.NewRouter()
			r.Use(m.Handler)
			r.Handle("/", proxy)
			front := httptest.NewUnstartedServer(r)
			front.Config.ErrorLog = log.New(io.Discard, "", 0)
			if h2 {
				front.EnableHTTP2 = true
				front.StartTLS()
			} else {
				front.Start()
			}
			defer front.Close()

			// Lowered first, by a slow and failing period.
			period(t, c, clock, 200, 3, 25*time.Millisecond)
			if c.Level() != 0.8 {
				t.Fatalf("after a slow and failing period: level %v, want 0.8", c.Level())
			}
			body := strings.Repeat("x", 256<<10)
			var wg sync.WaitGroup
			for i := range 40 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					target := front.URL + "/"
					if i%2 == 1 {
						target += "?early"
					}
					resp, err := front.Client().Post(target, "text/plain", strings.NewReader(body))
					if err != nil {
						return // the front may close a connection whose body it did not read
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}()
			}
			wg.Wait()
			front.Close() // every handler has returned, and the proxies' transports with them
			got := levels(t, c, clock, 3)
			if fmt.Sprint(got) != "[0.9 1 1]" {
				t.Errorf("three periods after the uploads: levels %v, want [0.9 1 1] (none left in flight)", got)
			}
		})
	}
}
