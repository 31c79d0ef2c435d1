package adaptive_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// unwrapper is a logging middleware's writer: it offers only Unwrap.
type unwrapper struct{ w http.ResponseWriter }

func (u unwrapper) Header() http.Header         { return u.w.Header() }
func (u unwrapper) Write(b []byte) (int, error) { return u.w.Write(b) }
func (u unwrapper) WriteHeader(code int)        { u.w.WriteHeader(code) }
func (u unwrapper) Unwrap() http.ResponseWriter { return u.w }

// TestInFlightEndsNested: the ways a request may end through both the
// middleware's SetFeedback and Controller.Handler on one Controller (two
// spans each), over a real server behind chi: answered, hijacked past a
// wrapper that offers only Unwrap, a hijack refused (after the response
// began), http.TimeoutHandler's timeout. Once they are all over, none is
// left in flight: with MinSamples 1, one would hold the level.
func TestInFlightEndsNested(t *testing.T) {
	clock := algotest.NewClock(t0)
	// The middleware times the requests on the test's clock too: on the
	// system's, the timeout's real millisecond or two (over the threshold
	// of 2ms) made the period they ended in slow and so lowered.
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	spec := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 1_000_000, Window: time.Minute}
	m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("p0", spec, ip))}, middleware.WithClock(clock))
	c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: time.Millisecond, MinSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	m.SetFeedback(c)
	period(t, c, clock, 100, 100, time.Second)
	if c.Level() != 0.8 {
		t.Fatalf("level %v, want 0.8", c.Level())
	}
	done := make(chan struct{})
	r := chi.NewRouter()
	r.Use(m.Handler, c.Handler)
	r.Get("/ok", func(w http.ResponseWriter, r *http.Request) {})
	r.Get("/hijack", func(w http.ResponseWriter, r *http.Request) {
		conn, rw, err := http.NewResponseController(unwrapper{w}).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		defer conn.Close()
		fmt.Fprint(rw, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		rw.Flush()
	})
	r.Get("/refused", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		if _, _, err := http.NewResponseController(w).Hijack(); err == nil {
			t.Error("hijack after a flush over HTTP/2 succeeded")
		}
	})
	r.Get("/timeout", http.TimeoutHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		close(done)
	}), time.Millisecond, "timeout").ServeHTTP)
	srv := httptest.NewUnstartedServer(r)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	get := func(path string) {
		res, err := srv.Client().Get(srv.URL + path)
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("GET %s: %v", path, err)
		}
		if res != nil {
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	}
	get("/ok")
	get("/refused")
	get("/timeout")
	<-done
	// Hijacking needs HTTP/1.
	h1 := httptest.NewServer(r)
	defer h1.Close()
	res, err := http.Get(h1.URL + "/hijack")
	if err != nil {
		t.Fatal(err)
	}
	bufio.NewReader(res.Body).WriteTo(io.Discard)
	res.Body.Close()
	clock.Advance(time.Minute)
	c.Evaluate() // the period they ended in (a 503 of the timeout: failing)
	got := levels(t, c, clock, 2)
	if fmt.Sprint(got) != "[0.9 1]" {
		t.Errorf("levels %v in the periods after every request is over, want [0.9 1]", got)
	}
}
