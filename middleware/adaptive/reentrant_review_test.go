package adaptive_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// gaugeObserver is a metrics observer that, as each effective limit is
// set, reads what the Controller and the Fleet driving the middleware
// report (their level, baseline and instance count), as one exporting
// them beside the limits would.
type gaugeObserver struct {
	ctrl  atomic.Pointer[adaptive.Controller]
	fleet atomic.Pointer[adaptive.Fleet]
	mu    sync.Mutex
	seen  []string
}

func (*gaugeObserver) ObserveRequest(middleware.Event)        {}
func (*gaugeObserver) ObserveState(from, to middleware.State) {}
func (o *gaugeObserver) ObserveLimit(name string, limit, configured int64) {
	s := fmt.Sprintf("%s %d/%d", name, limit, configured)
	if c := o.ctrl.Load(); c != nil {
		s += fmt.Sprintf(" level %v baseline %v", c.Level(), c.Baseline())
	}
	if f := o.fleet.Load(); f != nil {
		s += fmt.Sprintf(" instances %d", f.Instances())
	}
	o.mu.Lock()
	o.seen = append(o.seen, s)
	o.mu.Unlock()
}

func (o *gaugeObserver) last() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.seen) == 0 {
		return ""
	}
	return o.seen[len(o.seen)-1]
}

// TestGettersFromObserveLimit: the middleware's ObserveLimit runs while a
// Controller's evaluation (or a Fleet's update) sets the limits; an
// observer that reads the Controller's Level and Baseline, or the Fleet's
// Instances, there gets them, and the request that ended the period is
// answered. Through a ServeMux and chi, the Controller fed by SetFeedback,
// the Fleet through Fleet.Handler, on an injected clock.
func TestGettersFromObserveLimit(t *testing.T) {
	for _, router := range []string{"ServeMux", "chi"} {
		t.Run(router, func(t *testing.T) {
			clock := algotest.NewClock(t0)
			obs := &gaugeObserver{}
			m := clockedMiddleware(t, clock, []*policy.Policy{
				policy.Must(policy.PerMinute("health", 1000, ip)),
				policy.Must(policy.PerMinute("cluster", 1000, ip)),
			}, middleware.WithObserver(obs))
			c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: 10 * time.Millisecond, Policies: []string{"health"}})
			if err != nil {
				t.Fatal(err)
			}
			obs.ctrl.Store(c)
			m.SetFeedback(c)
			instances := atomic.Int64{}
			instances.Store(2)
			f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Clock: clock, Every: time.Minute, Policies: []string{"cluster"},
				Instances: func() int { return int(instances.Load()) }})
			if err != nil {
				t.Fatal(err)
			}
			obs.fleet.Store(f)

			// The application: 30 ms a request (three times the
			// baseline), the first 5 of every 100 failing.
			var served atomic.Int64
			app := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				clock.Advance(30 * time.Millisecond)
				if served.Add(1)%100 < 5 {
					w.WriteHeader(http.StatusServiceUnavailable)
				}
			})
			h := routed(router, app, f.Handler, m.Handler)
			serve := func() int {
				return hangguard.Await(t, get(h), 10*time.Second, "a request whose evaluation sets the limits answered")
			}
			for range 100 {
				serve()
			}
			clock.Advance(time.Minute)
			instances.Store(4)
			// Ends the period (slow and failing: 80%), and Every has
			// passed (4 instances).
			if code := serve(); code == http.StatusTooManyRequests {
				t.Fatalf("request after the period: %d", code)
			}
			if got := limitsOf(m); got != "800,250" {
				t.Errorf("limits %s, want 800,250", got)
			}
			if got, want := obs.last(), "health 800/1000 level 0.8 baseline 10ms instances"; !strings.HasPrefix(got, want) {
				t.Errorf("last ObserveLimit %q, want it to start %q", got, want)
			}
		})
	}
}
