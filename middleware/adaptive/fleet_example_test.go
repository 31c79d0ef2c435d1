package adaptive_test

import (
	"fmt"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// Three instances, each keeping its counters in memory, share a limit of
// 600 requests per minute: each enforces 200. The count comes from a
// variable kept up to date elsewhere (a watch of the service registry);
// Check reads it again at most once per Every, Update at once. A fake
// clock stands in for the seconds passing.
func ExampleFleet() {
	store, _ := algorithms.NewMemoryStore()
	m := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.PerMinute("api", 600, keyfunc.Must(keyfunc.IP()))),
	})
	clock := algotest.NewClock(time.Unix(0, 0))
	instances := 3
	f, err := adaptive.NewFleet(m, adaptive.FleetConfig{
		Instances: func() int { return instances },
		Every:     10 * time.Second,
		Clock:     clock,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// In a server: handler := f.Handler(m.Handler(app)), around the
	// limiter, or call f.Update() when the registry reports a change.
	fmt.Println(f.Instances(), m.Set().Policies()[0])

	instances = 4 // scaled up
	f.Check()     // within Every: the count is not read again
	fmt.Println(f.Instances(), m.Set().Policies()[0])
	clock.Advance(10 * time.Second)
	f.Check()
	fmt.Println(f.Instances(), m.Set().Policies()[0])

	instances = 0 // the registry answers nothing: the last good count stays
	f.Update()
	fmt.Println(f.Instances(), m.Set().Policies()[0])
	// Output:
	// 3 "api";q=200;w=60
	// 3 "api";q=200;w=60
	// 4 "api";q=150;w=60
	// 4 "api";q=150;w=60
}
