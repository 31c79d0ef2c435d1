package adaptive_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// recovered calls f and returns what it panicked with, or nil.
func recovered(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

// TestControllerLoggerPanicSetsTheLimits: a Logger's handler that panics
// on the record of a new level (a bug of the application's) reaches the
// caller of the evaluation (Evaluate's, or the request's), and leaves the
// limits of that level in force, as Level reports it: the requests of the
// period that follows are decided at 80, not at the 100 of before. Before,
// the limits were set after the record, so the panic left them at 100 for
// the whole period that followed while Level reported 0.8 (the limit in
// force 100, not 80), through Evaluate and through a request that ended
// the period alike.
func TestControllerLoggerPanicSetsTheLimits(t *testing.T) {
	for _, by := range []string{"Evaluate", "request"} {
		t.Run(by, func(t *testing.T) {
			m := newMiddleware(t, 100)
			c, clock := newController(t, m, adaptive.Config{Baseline: time.Millisecond, Logger: slog.New(&panicOnce{})})
			observe(c, 100, 10, 10*time.Millisecond)
			clock.Advance(time.Minute)
			var p any
			if by == "Evaluate" {
				p = recovered(func() { c.Evaluate() })
			} else {
				p = recovered(func() { c.Observe(time.Millisecond, 200) })
			}
			if p != "handler panics" {
				t.Fatalf("%s recovered %v, want the handler's panic", by, p)
			}
			if got, lim := c.Level(), limitsOf(m); got != 0.8 || lim != "80" {
				t.Errorf("after the handler panicked: level %v, limit in force %s; want 0.8, 80", got, lim)
			}
			// A request of the same period sets nothing: the limit stays.
			c.Observe(time.Millisecond, 200)
			if lim := limitsOf(m); lim != "80" {
				t.Errorf("after a request of the next period: limit in force %s, want 80", lim)
			}
		})
	}
}

// TestFleetLoggerPanicSetsTheLimits: a Logger's handler that panics on
// the record of a new count reaches the caller of the update (Update's,
// or Check's and the request's through Fleet.Handler), and leaves the
// limits of that count in force, as Instances reports it. Before, the
// limits were set after the record, so the panic left them at the share
// of the count before (50 of 100 with 2 instances, not 25 with 4) until
// Every passed again, while Instances reported 4.
func TestFleetLoggerPanicSetsTheLimits(t *testing.T) {
	for _, by := range []string{"Update", "Handler"} {
		t.Run(by, func(t *testing.T) {
			m := newMiddleware(t, 100)
			clock := algotest.NewClock(t0)
			n := 2
			h := &panicOnce{done: true} // NewFleet's record passes
			f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Instances: func() int { return n }, Every: time.Minute,
				Clock: clock, Logger: slog.New(h)})
			if err != nil {
				t.Fatal(err)
			}
			if lim := limitsOf(m); lim != "50" {
				t.Fatalf("2 instances: limit %s, want 50", lim)
			}
			n, h.done = 4, false
			clock.Advance(time.Minute)
			var p any
			if by == "Update" {
				p = recovered(func() { f.Update() })
			} else {
				app := f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
				p = recovered(func() { app.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil)) })
			}
			if p != "handler panics" {
				t.Fatalf("%s recovered %v, want the handler's panic", by, p)
			}
			if got, lim := f.Instances(), limitsOf(m); got != 4 || lim != "25" {
				t.Errorf("after the handler panicked: Instances %d, limit in force %s; want 4, 25", got, lim)
			}
			if err := f.Check(); err != nil || limitsOf(m) != "25" {
				t.Errorf("Check within Every: %v, limit %s; want nil, 25", err, limitsOf(m))
			}
		})
	}
}
