package adaptive_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestNamedPolicyRemovedAndBack: a policy named in Config.Policies (or
// FleetConfig.Policies) that a reload removes is skipped without an error
// (Evaluate, Apply, Update, Check return nil) while the rules in force
// have none of that name, the others still driven; a reload that brings
// it back has it driven again: at the Controller's level (0.512 after two
// more drops meanwhile) and the Fleet's share as the next request sees
// the new rules, or at once by Apply and Update.
func TestNamedPolicyRemovedAndBack(t *testing.T) {
	for _, by := range []string{"request", "Apply"} {
		t.Run(by, func(t *testing.T) {
			clock := algotest.NewClock(t0)
			api, other, cluster := policy.Must(policy.PerMinute("api", 100, ip)), policy.Must(policy.PerMinute("other", 50, ip)),
				policy.Must(policy.PerMinute("cluster", 100, ip))
			m := clockedMiddleware(t, clock, []*policy.Policy{api, other, cluster})
			c, err := adaptive.New(m, adaptive.Config{Clock: clock, Baseline: time.Millisecond, MinSamples: 1, Policies: []string{"api", "other"}})
			if err != nil {
				t.Fatal(err)
			}
			f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Clock: clock, Every: time.Hour, Policies: []string{"cluster"},
				Instances: func() int { return 4 }})
			if err != nil {
				t.Fatal(err)
			}
			period(t, c, clock, 20, 20, 10*time.Millisecond)
			if got := limitsOf(m); got != "80,40,25" {
				t.Fatalf("limits %s, want 80,40,25", got)
			}
			if err := m.SetPolicies([]*policy.Policy{other}); err != nil {
				t.Fatal(err)
			}
			period(t, c, clock, 20, 20, 10*time.Millisecond)
			period(t, c, clock, 20, 20, 10*time.Millisecond)
			if err := c.Apply(); err != nil || c.Level() != 0.512 || limitsOf(m) != "25" {
				t.Errorf("api removed: Apply %v, level %v, limits %s; want nil, 0.512, 25 (other's)", err, c.Level(), limitsOf(m))
			}
			if err := f.Update(); err != nil {
				t.Errorf("cluster removed: Update = %v, want nil", err)
			}
			if err := m.SetPolicies([]*policy.Policy{api, other, cluster}); err != nil {
				t.Fatal(err)
			}
			if by == "request" {
				c.Observe(time.Millisecond, 200)
				if err := f.Check(); err != nil {
					t.Fatal(err)
				}
			} else if err := c.Apply(); err != nil {
				t.Fatal(err)
			} else if err := f.Update(); err != nil {
				t.Fatal(err)
			}
			if got := limitsOf(m); got != "51,25,25" {
				t.Errorf("api and cluster back: limits %s, want 51,25,25", got)
			}
		})
	}
}
