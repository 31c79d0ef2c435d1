package adaptive_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// levelObserver reads the Controller's Level and Baseline from
// ObserveLimit, as each limit is set (by the Controller's evaluation, or
// a reload). It calls nothing that may evaluate: a reload calls it under
// the middleware's lock too (see the Controller's documentation).
type levelObserver struct {
	ctrl atomic.Pointer[adaptive.Controller]
}

func (*levelObserver) ObserveRequest(middleware.Event)        {}
func (*levelObserver) ObserveState(from, to middleware.State) {}
func (o *levelObserver) ObserveLimit(string, int64, int64) {
	if c := o.ctrl.Load(); c != nil {
		_, _ = c.Level(), c.Baseline()
	}
}

// refusingHandler is a slog.Handler that calls the Controller's Refused
// as the Controller's evaluation logs a change of level.
type refusingHandler struct {
	ctrl    atomic.Pointer[adaptive.Controller]
	records atomic.Int64
}

func (h *refusingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *refusingHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *refusingHandler) WithGroup(string) slog.Handler            { return h }
func (h *refusingHandler) Handle(context.Context, slog.Record) error {
	h.records.Add(1)
	if c := h.ctrl.Load(); c != nil {
		c.Refused()
	}
	return nil
}

// TestRefusingWhileEverythingMoves: requests, most of them denied (one
// key every client shares, a few units a second), some failing slowly on
// the clock, go through chi and a ServeMux in several goroutines while the
// Feedback is swapped between the Controller, none and a Feedback without
// Refused, a ticker calls Evaluate, a reloader replaces the policies
// (Apply after each), an observer reads the level as each limit is set,
// and the Logger's handler calls Refused as the evaluation logs.
// Nothing hangs (bounded by a guard), and once it stops no request is left
// in flight and none was counted twice as in flight: each period without a
// request climbs a step. Run under -race.
func TestRefusingWhileEverythingMoves(t *testing.T) {
	clock := algotest.NewClock(t0)
	policies := func(i int64) []*policy.Policy {
		return []*policy.Policy{policy.Must(policy.New("shared",
			algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 20 + i, Window: time.Second}, keyfunc.Global()))}
	}
	obs, logs := &levelObserver{}, &refusingHandler{}
	m := clockedMiddleware(t, clock, policies(0), middleware.WithObserver(obs))
	c, err := adaptive.New(m, adaptive.Config{Clock: clock, Period: time.Second, Baseline: time.Millisecond, MinSamples: 1,
		Logger: slog.New(logs)})
	if err != nil {
		t.Fatal(err)
	}
	obs.ctrl.Store(c)
	logs.ctrl.Store(c)
	m.SetFeedback(c)
	app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("fail") {
			clock.Advance(3 * time.Millisecond)
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	hs := []http.Handler{routed("chi", app, m.Handler), routed("ServeMux", app, m.Handler)}

	var stop atomic.Bool
	var denied atomic.Int64
	var clients, movers sync.WaitGroup
	for g := range 8 {
		clients.Add(1)
		go func() {
			defer clients.Done()
			h := hs[g%len(hs)]
			for i := range 300 {
				if i%25 == 24 {
					clock.Advance(200 * time.Millisecond)
				}
				target := "/"
				if i%3 == 0 {
					target = "/?fail"
				}
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
				switch w.Code {
				case http.StatusTooManyRequests:
					denied.Add(1)
				case http.StatusOK, http.StatusServiceUnavailable:
				default:
					t.Errorf("GET %s: %d", target, w.Code)
				}
			}
		}()
	}
	movers.Add(3)
	go func() { // the Feedback swapped
		defer movers.Done()
		for i := 0; !stop.Load(); i++ {
			switch i % 3 {
			case 0:
				m.SetFeedback(c)
			case 1:
				m.SetFeedback(nil)
			default:
				m.SetFeedback(observeOnly{c})
			}
		}
	}()
	go func() { // the ticker
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
			if err := m.SetPolicies(policies(i % 5)); err != nil {
				t.Errorf("SetPolicies: %v", err)
			}
			if err := c.Apply(); err != nil {
				t.Errorf("Apply: %v", err)
			}
		}
	}()
	done := make(chan struct{})
	go func() { clients.Wait(); stop.Store(true); movers.Wait(); close(done) }()
	hangguard.Await(t, done, time.Minute, "the clients, the Feedback swaps, the ticker and the reloader")
	if denied.Load() == 0 || logs.records.Load() == 0 {
		t.Fatalf("%d requests denied, %d changes of level: the test exercises nothing", denied.Load(), logs.records.Load())
	}
	t.Logf("%d of 2400 requests denied, %d changes of level, level %v after the run", denied.Load(), logs.records.Load(), c.Level())

	// Nothing in flight: each period without a request climbs a step.
	m.SetFeedback(c)
	clock.Advance(time.Second)
	if err := c.Evaluate(); err != nil { // the period in course
		t.Fatal(err)
	}
	from := c.Level()
	for i, got := range levelsEvery(t, c, clock, time.Second, 11) {
		if want := min(1, (from*1000+float64(i+1)*100)/1000); fmt.Sprintf("%.3f", got) != fmt.Sprintf("%.3f", want) {
			t.Fatalf("empty period %d from level %v: level %v, want %v (a request left in flight holds it)", i+1, from, got, want)
		}
	}
}
