package middleware_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestReloadTightenedWhileLowered: a policy held below its configured
// limit by SetLimit (an adaptive level), whose client used all the
// lowered limit gives, is reloaded tighter: the reload must not hand that
// client more at once than it would have had without the reload.
//
// The Spec the reload replaced, judged at its own burst for a change of
// shape, is not enough: a token_bucket lowered to 10 of 20 and emptied
// has 10 left in the configured bucket, and the new lowered bucket (burst
// 5) is fresh. Only the counters of the lowered Spec in force know it was
// emptied, so the reload guards the policy with that Spec too. (A
// fixed_window of 10 a minute held at 8, its 8 used, gets 2 at once when
// its window is reloaded at an hour: that SetPolicies documents and
// TestReloadTightenedShapeUnderSetLimit pins, so it is not a case here:
// a window kind's lowered Spec counts nothing of its own, its configured
// Spec's counters, judged at the lowered limit, standing for it.)
func TestReloadTightenedWhileLowered(t *testing.T) {
	cases := []struct {
		name     string
		from, to algorithms.Spec
		lowered  int64
		use      int
	}{
		{"token_bucket burst lowered",
			algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 20, Window: time.Minute},
			algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 20, Window: time.Minute, Burst: 10}, 10, 10},
	}
	for _, name := range storetest.Names {
		for _, tc := range cases {
			for _, router := range []string{"chi", "mux"} {
				t.Run(fmt.Sprintf("%s/%s/%s", name, tc.name, router), func(t *testing.T) {
					clock := algotest.NewClock(t0)
					store := storetest.New(t, name, clock)
					m := middleware.MustNew(store, []*policy.Policy{policy.Must(policy.New("p", tc.from, remote))}, middleware.WithClock(clock))
					h := routed(router, m)
					if err := m.SetLimit("p", tc.lowered); err != nil {
						t.Fatal(err)
					}
					clock.Advance(10 * time.Second)
					if got := admittedOf(h, 30); got != tc.use {
						t.Fatalf("lowered to %d: %d of 30 admitted, want %d", tc.lowered, got, tc.use)
					}
					if err := m.SetPolicies([]*policy.Policy{policy.Must(policy.New("p", tc.to, remote))}); err != nil {
						t.Fatal(err)
					}
					if got := admittedOf(h, 30); got != 0 {
						t.Errorf("reloaded as %v while lowered (in force: %v, guards %v): %d of 30 admitted at once, want 0",
							tc.to, m.Set().Policy(0).Spec(), m.Set().Policy(0).Guards(), got)
					}
				})
			}
		}
	}
}
