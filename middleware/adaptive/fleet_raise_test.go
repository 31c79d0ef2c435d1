package adaptive_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestFleetShareReloadedHigherKeepsUsage: a reload that raises a
// cluster-wide limit (12 to 24 a minute) raises each instance's share (4
// of 3 instances to 8): a client that used its share of 4 gets 4 more of
// the new share in that minute, not 8, for every kind whose counters
// count requests whatever the limit; two minutes on it gets 8. (Of 2
// instances the new share, 12, is the replaced configured Spec itself,
// whose counters hold the client's requests.) Through
// a ServeMux, on the memory store and an injected clock.
func TestFleetShareReloadedHigherKeepsUsage(t *testing.T) {
	for _, kind := range []algorithms.Kind{algorithms.FixedWindow, algorithms.SlidingWindow, algorithms.SlidingBuckets} {
		t.Run(string(kind), func(t *testing.T) {
			clock := algotest.NewClock(t0) // a minute's start
			store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { store.Close() })
			perIP := func(limit int64) *policy.Policy {
				s := algorithms.Spec{Algorithm: kind, Limit: limit, Window: time.Minute}
				if kind == algorithms.SlidingBuckets {
					s.Buckets = 6
				}
				return policy.Must(policy.New("per-ip", s, ip))
			}
			m := middleware.MustNew(store, []*policy.Policy{perIP(12)}, middleware.WithClock(clock))
			f, err := adaptive.NewFleet(m, adaptive.FleetConfig{Instances: func() int { return 3 }, Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			mux := http.NewServeMux()
			mux.Handle("GET /", m.Handler(f.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))))
			admitted := func(n int) int { a, _ := serveN(mux, n); return a }
			clock.Advance(10 * time.Second)
			if got := admitted(5); got != 4 {
				t.Fatalf("at a share of 4: %d of 5 admitted", got)
			}
			if err := m.SetPolicies([]*policy.Policy{perIP(24)}); err != nil {
				t.Fatal(err)
			}
			f.Update()
			if l := m.Set().Policy(0).Spec().Limit; l != 8 {
				t.Fatalf("reloaded at 24 over 3 instances: share %d, want 8", l)
			}
			if got := admitted(9); got != 4 {
				t.Errorf("share raised to 8 after 4 used: %d of 9 admitted, want 4", got)
			}
			clock.Advance(2 * time.Minute) // past the sliding window's weighted previous one
			if got := admitted(9); got != 8 {
				t.Errorf("two minutes on, at a share of 8: %d of 9 admitted, want 8", got)
			}
		})
	}
}
