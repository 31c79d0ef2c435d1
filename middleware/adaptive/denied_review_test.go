package adaptive_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// hourly is a policy of 100 requests per hour per client IP (a fixed
// window: what a client used stays used until the hour ends).
func hourly(t *testing.T, name string) *policy.Policy {
	t.Helper()
	p, err := policy.New(name, algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Hour}, ip)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDeniedRequestsJudgeNoPeriod: once a lowered level denies every
// request (a client that used its 80 of an hourly 100 at level 0.8), a
// Controller judges the periods only as it hears of requests. Fed by the
// middleware (SetFeedback), it hears of the denied ones too
// (Controller.Refused): the first denied request of each minute judges
// the minute that ended and raises the level, and the next request passes
// (90 in force), a minute after a ticker's Evaluate would have let one
// through. Wrapped around the application inside the limiter
// (Controller.Handler), it hears of none of them: no period is judged and
// the level stays, however long the service has been healthy, until the
// window ends or a request passes; a ticker's Evaluate, as the package
// documentation says, judges the periods, and the client's next request
// passes. Through a ServeMux and chi, on an injected clock.
func TestDeniedRequestsJudgeNoPeriod(t *testing.T) {
	for _, router := range []string{"ServeMux", "chi"} {
		for _, feed := range []string{"refusals", "handler", "handler and ticker"} {
			t.Run(router+"/"+feed, func(t *testing.T) {
				clock := algotest.NewClock(t0)
				m := clockedMiddleware(t, clock, []*policy.Policy{hourly(t, "hourly")})
				c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond, MinSamples: 1})
				if err != nil {
					t.Fatal(err)
				}
				var h http.Handler
				if feed == "refusals" {
					m.SetFeedback(c)
					h = routed(router, emptyApp, m.Handler)
				} else {
					h = routed(router, emptyApp, m.Handler, c.Handler)
				}
				observe(c, 20, 20, time.Second) // slow and failing
				clock.Advance(time.Minute)
				if err := c.Evaluate(); err != nil || c.Level() != 0.8 {
					t.Fatalf("after a slow and failing period: %v, level %v; want 0.8", err, c.Level())
				}
				if admitted, _ := serveN(h, 100); admitted != 80 {
					t.Fatalf("%d of 100 admitted at level 0.8, want 80", admitted)
				}
				for minute := 1; minute <= 10; minute++ {
					clock.Advance(time.Minute)
					if feed == "handler and ticker" {
						if err := c.Evaluate(); err != nil {
							t.Fatal(err)
						}
					}
					admitted, w := serveN(h, 1)
					switch {
					case feed == "handler and ticker" && admitted != 1:
						t.Fatalf("minute %d, ticker: %d, level %v, limit %s; want the request admitted at the level raised (0.9 and up)",
							minute, w.Code, c.Level(), limitsOf(m))
					case feed == "handler" && (admitted != 0 || c.Level() != 0.8):
						t.Fatalf("minute %d, Controller.Handler alone: %d, level %v; want 429, 0.8 (no period judged: none passed)", minute, w.Code, c.Level())
					case feed == "refusals" && minute == 1 && (admitted != 0 || c.Level() != 0.9):
						t.Fatalf("minute %d, refusals: %d, level %v; want 429 (decided at 0.8), then 0.9 (the minute that ended judged by it)", minute, w.Code, c.Level())
					case feed == "refusals" && minute > 1 && admitted != 1:
						t.Fatalf("minute %d, refusals: %d, level %v, limit %s; want the request admitted at the level raised (0.9 and up)",
							minute, w.Code, c.Level(), limitsOf(m))
					}
				}
			})
		}
	}
}

// TestFleetHandlerAroundTheLimiter: Fleet.Handler around the limiter
// checks every request, the denied ones too, as its documentation says to
// put it: a client that used its share of 25 (4 instances, an hourly 100)
// gets its next request through once the count falls to 1 and Every has
// passed (the share back at 100). Inside the limiter, where only the
// requests admitted check, the share used up holds, and the count of
// before with it, until the window ends. Before, the Example put it there
// ("m.Handler(f.Handler(app))"). Through a ServeMux and chi.
func TestFleetHandlerAroundTheLimiter(t *testing.T) {
	for _, router := range []string{"ServeMux", "chi"} {
		for _, around := range []bool{true, false} {
			name := router + "/around"
			if !around {
				name = router + "/inside"
			}
			t.Run(name, func(t *testing.T) {
				clock := algotest.NewClock(t0)
				m := clockedMiddleware(t, clock, []*policy.Policy{hourly(t, "cluster")})
				n := 4
				f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Clock: clock, Every: 10 * time.Second,
					Instances: func() int { return n }})
				if err != nil {
					t.Fatal(err)
				}
				var h http.Handler
				if around {
					h = routed(router, emptyApp, f.Handler, m.Handler)
				} else {
					h = routed(router, emptyApp, m.Handler, f.Handler)
				}
				if admitted, _ := serveN(h, 30); admitted != 25 {
					t.Fatalf("%d of 30 admitted with 4 instances, want 25", admitted)
				}
				n = 1
				for range 10 {
					clock.Advance(time.Minute)
					admitted, w := serveN(h, 1)
					switch {
					case around && (admitted != 1 || f.Instances() != 1):
						t.Fatalf("around: %d, Instances %d, limit %s; want the request admitted, 1 instance", w.Code, f.Instances(), limitsOf(m))
					case !around && (admitted != 0 || f.Instances() != 4):
						t.Fatalf("inside: %d, Instances %d; want 429, 4 (no Check: no request passed)", w.Code, f.Instances())
					}
				}
			})
		}
	}
}
