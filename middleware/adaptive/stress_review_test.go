package adaptive_test

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestServingWhileEverythingMoves: a Controller (fed by SetFeedback) and
// a Fleet (through Fleet.Handler) drive two policies of one middleware
// behind real servers, chi and a ServeMux, while clients send requests
// that answer, fail (slowly, on the clock), panic, hijack their
// connection, or stream with Flush and ReadFrom, moving the clock on as
// they go; a ticker ends periods, a
// reloader replaces the policies (Apply and Update after each), the
// instance count moves, and an observer reads Level, Baseline and
// Instances as each limit is set. Once it all stops: the limits are those
// of the level and the count (exactly), no request is left in flight
// (MinSamples 1: one would hold the level), and each healthy period
// climbs a step. Run under -race.
func TestServingWhileEverythingMoves(t *testing.T) {
	clock := algotest.NewClock(t0)
	policies := func(i int64) []*policy.Policy {
		return []*policy.Policy{
			policy.Must(policy.New("health", algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 1_000_000 + i, Window: time.Minute}, ip)),
			policy.Must(policy.New("cluster", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 1_000_000 + 7*i, Window: time.Minute}, ip)),
		}
	}
	obs := &gaugeObserver{}
	m := clockedMiddleware(t, clock, policies(0), middleware.WithObserver(obs))
	c, err := adaptive.New(m, adaptive.Config{Clock: clock, Period: time.Second, Baseline: time.Millisecond,
		MinSamples: 1, Policies: []string{"health"}})
	if err != nil {
		t.Fatal(err)
	}
	obs.ctrl.Store(c)
	m.SetFeedback(c)
	var instances atomic.Int64
	instances.Store(3)
	f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Clock: clock, Every: 500 * time.Millisecond, Policies: []string{"cluster"},
		Instances: func() int { return int(instances.Load()) }})
	if err != nil {
		t.Fatal(err)
	}
	obs.fleet.Store(f)

	routes := func(get func(pattern string, h http.HandlerFunc)) {
		get("/ok", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
		get("/fail", func(w http.ResponseWriter, r *http.Request) {
			clock.Advance(3 * time.Millisecond)
			http.Error(w, "failing", http.StatusServiceUnavailable)
		})
		get("/panic", func(w http.ResponseWriter, r *http.Request) { panic("handler panics") })
		get("/hijack", func(w http.ResponseWriter, r *http.Request) {
			conn, rw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			defer conn.Close()
			fmt.Fprint(rw, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
			rw.Flush()
		})
		get("/stream", func(w http.ResponseWriter, r *http.Request) {
			if _, ok := w.(io.ReaderFrom); !ok {
				t.Error("the handler's writer is no io.ReaderFrom")
			}
			for range 3 {
				io.WriteString(w, "chunk ")
				w.(http.Flusher).Flush()
			}
			io.Copy(w, strings.NewReader("tail"))
		})
	}
	r := chi.NewRouter()
	r.Use(f.Handler, m.Handler)
	routes(func(p string, h http.HandlerFunc) { r.Get(p, h) })
	mux := http.NewServeMux()
	routes(func(p string, h http.HandlerFunc) { mux.Handle("GET "+p, f.Handler(m.Handler(h))) })
	var servers []*httptest.Server
	for _, h := range []http.Handler{r, mux} {
		srv := httptest.NewUnstartedServer(h)
		srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the panics
		srv.Start()
		t.Cleanup(srv.Close)
		servers = append(servers, srv)
	}

	var stop atomic.Bool
	var clients, movers sync.WaitGroup
	paths := []string{"/ok", "/ok", "/ok", "/fail", "/panic", "/hijack", "/stream"}
	for g := range 12 {
		clients.Add(1)
		go func() {
			defer clients.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			srv := servers[g%len(servers)]
			client := &http.Client{Transport: &http.Transport{}}
			defer client.CloseIdleConnections()
			for i := range 60 {
				if i%10 == 9 {
					clock.Advance(50 * time.Millisecond)
				}
				path := paths[rng.IntN(len(paths))]
				res, err := client.Get(srv.URL + path)
				if err != nil {
					if path == "/panic" {
						continue // the server drops the connection
					}
					t.Errorf("GET %s: %v", path, err)
					return
				}
				body, _ := io.ReadAll(bufio.NewReader(res.Body))
				res.Body.Close()
				if path == "/stream" && string(body) != "chunk chunk chunk tail" {
					t.Errorf("GET /stream: %q", body)
				}
			}
		}()
	}
	movers.Add(3)
	go func() { // the ticker (the clients move the clock)
		defer movers.Done()
		for !stop.Load() {
			if err := c.Evaluate(); err != nil {
				t.Errorf("Evaluate: %v", err)
			}
		}
	}()
	go func() { // the reloader
		defer movers.Done()
		for i := int64(1); !stop.Load(); i++ {
			if err := m.SetPolicies(policies(i % 50)); err != nil {
				t.Errorf("SetPolicies: %v", err)
			}
			if err := c.Apply(); err != nil {
				t.Errorf("Apply: %v", err)
			}
			if err := f.Update(); err != nil {
				t.Errorf("Update: %v", err)
			}
		}
	}()
	go func() { // the registry
		defer movers.Done()
		for i := 0; !stop.Load(); i++ {
			instances.Store(int64(1 + i%5))
			f.Check()
		}
	}()
	clients.Wait()
	stop.Store(true)
	movers.Wait()

	t.Logf("level %v after the run", c.Level())
	// Settle on the last policies and count.
	if err := m.SetPolicies(policies(50)); err != nil {
		t.Fatal(err)
	}
	instances.Store(4)
	if err := errorsOf(c.Apply(), f.Update()); err != nil {
		t.Fatal(err)
	}
	health := int64(1_000_050)
	wantHealth := max(health*int64(c.Level()*1000+0.5)/1000, (health+1)/2)
	if got, want := limitsOf(m), fmt.Sprintf("%d,%d", wantHealth, int64(1_000_350)/4); got != want {
		t.Errorf("limits %s at level %v and 4 instances, want %s", got, c.Level(), want)
	}
	if got := obs.last(); !strings.Contains(got, " instances 4") {
		t.Errorf("the observer's last reading %q, want 4 instances", got)
	}
	// Nothing in flight: each period without a request climbs a step.
	clock.Advance(time.Second)
	c.Evaluate() // the period in course
	from := c.Level()
	for i, got := range levelsEvery(t, c, clock, time.Second, 11) {
		if want := min(1, (from*1000+float64(i+1)*100)/1000); fmt.Sprintf("%.3f", got) != fmt.Sprintf("%.3f", want) {
			t.Fatalf("empty period %d from level %v: level %v, want %v (a request left in flight holds it)", i+1, from, got, want)
		}
	}
}

func errorsOf(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
