package middleware_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestReloadGuardCapKeepsGuardsOfSpecInForce: past policy.MaxCarries a
// reload keeps the guards that guard the Spec the policy enforces (its
// limit set by SetLimit), before those that guard only its configured
// Spec, which SetLimit keeps out of force. A leaky_bucket reloaded five
// times at one instant, held at 7 and then raised to 15 by SetLimit, has
// eight Specs whose counters hold its requests when its window is doubled
// (9/3m burst 5 to 9/6m burst 5, in force 15/3m burst 8 to 15/6m burst 8):
// two of them (7/1m, and the 9/3m burst 5 the reload replaces) guard the
// configured Spec alone, and the cap dropped 15/1m burst 8, the guard
// whose counters know the client emptied it: the client got 8 at once,
// where the middleware not reloaded the last time (its twin) admits none.
// Found by TestReloadTightenedTwinDifferential's trace, seed 24176, run
// past its 1000 seeds.
func TestReloadGuardCapKeepsGuardsOfSpecInForce(t *testing.T) {
	leaky := func(limit int64, window time.Duration, burst int64) *policy.Policy {
		return policy.Must(policy.New("p", algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: limit, Window: window, Burst: burst}, remote))
	}
	for _, store := range storetest.Names {
		for _, router := range []string{"chi", "mux"} {
			t.Run(store+"/"+router, func(t *testing.T) {
				clock := algotest.NewClock(t0)
				newM := func() *middleware.Middleware {
					return middleware.MustNew(storetest.New(t, store, clock), []*policy.Policy{leaky(15, time.Minute, 8)}, middleware.WithClock(clock))
				}
				m, twin := newM(), newM()
				h, ht := routed(router, m), routed(router, twin)
				step := func(what string, f func(*middleware.Middleware) error) {
					t.Helper()
					for _, mm := range []*middleware.Middleware{m, twin} {
						if err := f(mm); err != nil {
							t.Fatalf("%s: %v", what, err)
						}
					}
				}
				requests := func(n, want int) {
					t.Helper()
					if a, b := admittedOf(h, n), admittedOf(ht, n); a != want || b != want {
						t.Fatalf("%d requests: %d admitted, the twin %d; want %d", n, a, b, want)
					}
				}
				setLimit := func(l int64) { step("SetLimit", func(mm *middleware.Middleware) error { return mm.SetLimit("p", l) }) }
				reload := func(p *policy.Policy) {
					step("SetPolicies", func(mm *middleware.Middleware) error { return mm.SetPolicies([]*policy.Policy{p}) })
				}
				requests(2, 2)
				setLimit(19)
				setLimit(7)
				reload(leaky(14, 2*time.Minute, 17))
				reload(leaky(18, time.Minute, 18))
				reload(leaky(13, 2*time.Minute, 20))
				reload(leaky(6, 3*time.Minute, 12))
				requests(4, 4)
				setLimit(7)
				requests(3, 3)
				reload(leaky(9, 3*time.Minute, 5))
				requests(2, 2)
				setLimit(15)
				if err := m.SetPolicies([]*policy.Policy{leaky(9, 6*time.Minute, 5)}); err != nil {
					t.Fatal(err)
				}
				if got, want := admittedOf(h, 10), admittedOf(ht, 10); got > want {
					t.Errorf("after the window is doubled, %d admitted at once (in force %v, guards %v), the twin %d", got, m.Set().Policy(0).Spec(), m.Set().Policy(0).Guards(), want)
				}
			})
		}
	}
}
