package adaptive_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// reloadingTarget, armed, reloads its middleware (p0 at limit) on the
// next SetLimit of p0 it is given, before passing that SetLimit on: a reload
// landing between the driver's reading of the configured policy and its
// SetLimit.
type reloadingTarget struct {
	*middleware.Middleware
	limit int64
	armed bool
}

func (t *reloadingTarget) SetLimit(name string, limit int64) error {
	t.reload(name)
	return t.Middleware.SetLimit(name, limit)
}

// SetLimitUnguarded is SetLimit's twin, which a Fleet calls.
func (t *reloadingTarget) SetLimitUnguarded(name string, limit int64) error {
	t.reload(name)
	return t.Middleware.SetLimitUnguarded(name, limit)
}

func (t *reloadingTarget) reload(name string) {
	if name == "p0" && t.armed {
		t.armed = false
		t.Middleware.SetPolicies([]*policy.Policy{policy.Must(policy.PerMinute("p0", t.limit, ip))})
	}
}

// TestNoStaleLimitAfterReload: a reload between the reading of the
// configured limit and the SetLimit made from it must not leave the new
// configured policy at a limit computed from the old one: the Controller
// and the Fleet set the limit again for the new configuration before
// returning (and return no error for a stale limit above the new
// configured one).
func TestNoStaleLimitAfterReload(t *testing.T) {
	for _, tc := range []struct {
		name        string
		from, to    int64
		ctrl, fleet string // limits wanted after the Controller's (level 0.8) and the Fleet's (4 instances) SetLimit
	}{
		{"raised", 100, 1000, "800", "250"},
		{"lowered", 1000, 100, "80", "25"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMiddleware(t, tc.from)
			clock := algotest.NewClock(t0)
			target := &reloadingTarget{Middleware: m, limit: tc.to}
			c, err := adaptive.New(target, adaptive.Config{Clock: clock, Baseline: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 100 {
				c.Observe(10*time.Millisecond, 200+300*min(1, i%10/9)) // 10 errors, slow
			}
			target.armed = true // the SetLimit of the level 0.8 meets the reload
			clock.Advance(time.Minute)
			if err := c.Evaluate(); err != nil {
				t.Errorf("Evaluate: %v", err)
			}
			if target.armed {
				t.Fatal("no SetLimit of p0 met the reload")
			}
			if got := limitsOf(m); got != tc.ctrl {
				t.Errorf("Controller: %s after the reload to %d, want %s (0.8 of the new limit)", got, tc.to, tc.ctrl)
			}

			store, err := algorithms.NewMemoryStore(algorithms.WithClock(algotest.NewClock(t0)))
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			m2 := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.PerMinute("p0", tc.from, ip))})
			ft := &reloadingTarget{Middleware: m2, limit: tc.to, armed: true}
			if _, err := adaptive.NewFleet(ft, adaptive.FleetConfig{Instances: func() int { return 4 }, Clock: clock}); err != nil {
				t.Errorf("NewFleet: %v", err)
			}
			if got := limitsOf(m2); got != tc.fleet {
				t.Errorf("Fleet: %s after the reload to %d, want %s (a quarter of the new limit)", got, tc.to, tc.fleet)
			}
		})
	}
}
