package adaptive_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// callHandler is a slog.Handler that calls f (then forgets it) on the
// first record it gets, as a handler of the application's that does
// something of its own with the Controller or the Fleet would.
type callHandler struct {
	mu sync.Mutex
	f  func()
}

func (h *callHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *callHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *callHandler) WithGroup(string) slog.Handler            { return h }
func (h *callHandler) Handle(context.Context, slog.Record) error {
	h.mu.Lock()
	f := h.f
	h.f = nil
	h.mu.Unlock()
	if f != nil {
		f()
	}
	return nil
}

// callObserver is a middleware observer whose ObserveLimit calls f (then
// forgets it) the first time.
type callObserver struct{ callHandler }

func (*callObserver) ObserveRequest(middleware.Event)        {}
func (*callObserver) ObserveState(from, to middleware.State) {}
func (o *callObserver) ObserveLimit(string, int64, int64) {
	o.Handle(context.Background(), slog.Record{})
}

// TestCallbacksMayObserve: what runs under the lock of a Controller's
// evaluation (the Logger's handler, the middleware's observers as its
// SetLimit sets a limit) or of a Fleet's update (the same, and Instances)
// may call what the package documentation says takes no lock or only
// tries it: Observe, Begin and End, Refused, Level and Baseline; Check
// and Instances. Each returns (bounded by a guard), the request counted
// (a refused one is not, and its period is as healthy), and
// the evaluation or update that called it ends with the limits of its
// level or count. (Evaluate, Apply and Update from there would wait for
// that lock for ever, as the documentation says. And the documentation
// says to call only Level and Baseline from ObserveLimit, which the
// other writers of the middleware's rules call under its lock, where an
// Observe, Begin, End or Refused that evaluates waits for that lock: see
// TestRefusingWhileEverythingMoves. Here ObserveLimit is called by the
// evaluation alone.)
func TestCallbacksMayObserve(t *testing.T) {
	ctrlCalls := map[string]func(c *adaptive.Controller) string{
		"Observe": func(c *adaptive.Controller) string { c.Observe(time.Millisecond, 200); return "" },
		"Begin":   func(c *adaptive.Controller) string { c.Begin().End(); return "" },
		"Refused": func(c *adaptive.Controller) string { c.Refused(); return "" },
		"Level":   func(c *adaptive.Controller) string { return fmt.Sprint(c.Level(), c.Baseline()) },
	}
	for call, f := range ctrlCalls {
		for _, from := range []string{"Logger", "ObserveLimit"} {
			t.Run("Controller/"+call+"/"+from, func(t *testing.T) {
				h, obs := &callHandler{}, &callObserver{}
				clock := algotest.NewClock(t0)
				m := clockedMiddleware(t, clock, []*policy.Policy{policy.Must(policy.PerMinute("p", 100, ip))},
					middleware.WithObserver(obs))
				c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: time.Millisecond, MinSamples: 1, Logger: slog.New(h)})
				if err != nil {
					t.Fatal(err)
				}
				var got string
				do := func() { got = f(c) }
				if from == "Logger" {
					h.f = do
				} else {
					obs.f = do
				}
				observe(c, 10, 10, 10*time.Millisecond)
				clock.Advance(time.Minute)
				done := make(chan error)
				go func() { done <- c.Evaluate() }()
				if err := hangguard.Await(t, done, 10*time.Second, "the evaluation whose "+from+" calls "+call); err != nil {
					t.Fatal(err)
				}
				if lim := limitsOf(m); lim != "80" || c.Level() != 0.8 {
					t.Errorf("level %v, limit %s; want 0.8, 80", c.Level(), lim)
				}
				if call == "Level" && got != "0.8 1ms" {
					t.Errorf("Level and Baseline from %s: %s, want 0.8 1ms", from, got)
				}
				if call != "Level" {
					// The request counted in the period in course: a
					// healthy period of 1 request climbs back to 0.9.
					clock.Advance(time.Minute)
					if err := c.Evaluate(); err != nil || c.Level() != 0.9 {
						t.Errorf("after the next period: %v, level %v; want 0.9", err, c.Level())
					}
				}
			})
		}
	}
	for _, from := range []string{"Logger", "ObserveLimit", "Instances"} {
		t.Run("Fleet/Check/"+from, func(t *testing.T) {
			h, obs := &callHandler{}, &callObserver{}
			clock := algotest.NewClock(t0)
			m := clockedMiddleware(t, clock, []*policy.Policy{policy.Must(policy.PerMinute("p", 100, ip))},
				middleware.WithObserver(obs))
			var f *adaptive.Fleet
			n, counts := 1, make(chan int, 10)
			call := func() { counts <- f.Instances(); _ = f.Check() }
			var inst callHandler
			f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Clock: clock, Every: time.Minute, Logger: slog.New(h),
				Instances: func() int { inst.Handle(context.Background(), slog.Record{}); return n }})
			if err != nil {
				t.Fatal(err)
			}
			switch from {
			case "Logger":
				h.f = call
			case "ObserveLimit":
				obs.f = call
			default:
				inst.f = call
			}
			n = 4
			done := make(chan error)
			go func() { done <- f.Update() }()
			if err := hangguard.Await(t, done, 10*time.Second, "the update whose "+from+" calls Check"); err != nil {
				t.Fatal(err)
			}
			if got, lim := f.Instances(), limitsOf(m); got != 4 || lim != "25" {
				t.Errorf("Instances %d, limit %s; want 4, 25", got, lim)
			}
			if len(counts) != 1 {
				t.Errorf("%s called %d times, want once", from, len(counts))
			}
		})
	}
}

// TestFleetInstancesPanic: an Instances that panics (a registry client's
// bug) reaches the request whose Check read it, leaves the count and the
// limits of before, and is read again by Check once Every has passed
// since, as the Fleet's documentation says (a Check before then returns
// at once, nothing read); Update reads it at once.
func TestFleetInstancesPanic(t *testing.T) {
	m := newMiddleware(t, 100)
	clock := algotest.NewClock(t0)
	n, reads, boom := 2, 0, false
	f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Clock: clock, Every: time.Minute, Instances: func() int {
		reads++
		if boom {
			boom = false
			panic("registry client's bug")
		}
		return n
	}})
	if err != nil {
		t.Fatal(err)
	}
	n, boom = 4, true
	clock.Advance(time.Minute)
	if p := recovered(func() { f.Check() }); p != "registry client's bug" {
		t.Fatalf("Check recovered %v, want Instances' panic", p)
	}
	if got, lim := f.Instances(), limitsOf(m); got != 2 || lim != "50" {
		t.Errorf("after the panic: Instances %d, limit %s; want 2, 50 (of before)", got, lim)
	}
	clock.Advance(time.Minute - 1)
	if err := f.Check(); err != nil || reads != 2 || limitsOf(m) != "50" {
		t.Errorf("Check before Every passed: %v, %d readings, limit %s; want nil, 2, 50", err, reads, limitsOf(m))
	}
	clock.Advance(1)
	if err := f.Check(); err != nil || reads != 3 || f.Instances() != 4 || limitsOf(m) != "25" {
		t.Errorf("Check once Every passed: %v, %d readings, Instances %d, limit %s; want nil, 3, 4, 25", err, reads, f.Instances(), limitsOf(m))
	}
	n, boom = 5, true
	if p := recovered(func() { f.Update() }); p != "registry client's bug" {
		t.Fatalf("Update recovered %v, want Instances' panic", p)
	}
	if err := f.Update(); err != nil || f.Instances() != 5 || limitsOf(m) != "20" {
		t.Errorf("Update after the panic: %v, Instances %d, limit %s; want nil, 5, 20", err, f.Instances(), limitsOf(m))
	}
}
