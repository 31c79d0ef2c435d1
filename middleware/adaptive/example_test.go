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

// The seed's rule: when p99 latency is above twice the baseline and more
// than 1% of requests fail, the limit drops to 80%; it comes back by 10%
// of the configured limit per healthy period. A fake clock stands in for
// the minutes passing.
func Example() {
	store, _ := algorithms.NewMemoryStore()
	m := middleware.MustNew(store, []*policy.Policy{
		policy.Must(policy.PerSecond("api", 1000, keyfunc.Must(keyfunc.IP()))),
	})
	clock := algotest.NewClock(time.Unix(0, 0))
	c, _ := adaptive.New(m, adaptive.Config{Period: time.Minute, Baseline: 20 * time.Millisecond, Clock: clock})
	// In a server: handler := m.Handler(c.Handler(app)).

	minute := func(latency time.Duration, failures int) {
		for i := range 1000 {
			status := 200
			if i < failures {
				status = 500
			}
			c.Observe(latency, status)
		}
		clock.Advance(time.Minute)
		c.Evaluate()
		fmt.Println(m.Set().Policies()[0])
	}
	minute(20*time.Millisecond, 0)   // healthy
	minute(100*time.Millisecond, 50) // slow and failing
	minute(100*time.Millisecond, 50) // still
	minute(20*time.Millisecond, 0)   // recovering
	minute(20*time.Millisecond, 0)
	minute(20*time.Millisecond, 0)
	minute(20*time.Millisecond, 0)
	// Output:
	// "api";q=1000;w=1
	// "api";q=800;w=1
	// "api";q=640;w=1
	// "api";q=740;w=1
	// "api";q=840;w=1
	// "api";q=940;w=1
	// "api";q=1000;w=1
}
