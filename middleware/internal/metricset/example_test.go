package metricset_test

import (
	"fmt"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metricset"
)

// An adapter observing two middlewares: their per-policy values are built
// once, and the failure_state gauges stay right while one of them fails and
// the other recovers.
func Example() {
	policies := metricset.NewPolicies(func(name string) string {
		fmt.Println("build", name)
		return "metrics of " + name
	})
	policies.SetLimits(new(metricset.Owner), "per-ip", 100, 100, nil)
	fmt.Println(policies.Get("per-ip"))

	var states metricset.States
	show := func(v metricset.StateValues) {
		for _, s := range middleware.States {
			fmt.Printf(" %s=%d", s, v[s])
		}
		fmt.Println()
	}
	states.Transition(middleware.StateHealthy, middleware.StateFailingOpen, show)   // the first fails
	states.Transition(middleware.StateHealthy, middleware.StateFailingClosed, show) // the second too
	states.Transition(middleware.StateFailingOpen, middleware.StateHealthy, show)   // the first recovers
	// Output:
	// build per-ip
	// metrics of per-ip
	//  healthy=0 open=1 closed=0 fallback=0
	//  healthy=0 open=1 closed=1 fallback=0
	//  healthy=0 open=0 closed=1 fallback=0
}
