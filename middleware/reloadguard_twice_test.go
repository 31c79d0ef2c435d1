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

// TestReloadTightenedTwiceKeepsUsage: a policy tightened by a reload and
// tightened again while the first reload's guard stands does not hand a
// client a fresh quota at the second reload: what it used under the
// Spec of the first reload counts, as what it used before it does: it
// gets no more at once than it would have without the second reload.
//
// For a change of shape (a burst lowered twice) the Spec the first
// reload replaced holds every request but is judged at its own burst:
// only the counters of the Spec the second reload replaces know the
// client emptied its smaller bucket. So the second reload guards the
// policy with both ([policy.Policy.Guards]), each until its own end.
func TestReloadTightenedTwiceKeepsUsage(t *testing.T) {
	tb := func(burst int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 20, Window: time.Minute, Burst: burst}
	}
	fw := func(limit int64, w time.Duration) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: limit, Window: w}
	}
	cases := []struct {
		name       string
		a, b, c    algorithms.Spec
		useA, useB int
	}{
		{"token_bucket burst 20, 10, 5", tb(0), tb(10), tb(5), 0, 10},
		{"token_bucket burst 20, 10, 5, used before both", tb(0), tb(10), tb(5), 10, 0},
		{"token_bucket burst 20, 10, 5, used before the first", tb(0), tb(10), tb(5), 20, 0},
		{"fixed_window a minute, an hour, 10 to 5", fw(10, time.Minute), fw(10, time.Hour), fw(5, time.Hour), 0, 10},
		{"fixed_window a minute, an hour, 10 to 5, used before both", fw(10, time.Minute), fw(10, time.Hour), fw(5, time.Hour), 6, 2},
	}
	for _, name := range storetest.Names {
		for i, tc := range cases {
			router := []string{"chi", "mux"}[i%2]
			t.Run(fmt.Sprintf("%s/%s/%s", name, tc.name, router), func(t *testing.T) {
				clock := algotest.NewClock(t0)
				// m is reloaded twice; twin, on a store of its own, the
				// first time only: after the second reload m must admit
				// no more than twin does.
				m := middleware.MustNew(storetest.New(t, name, clock), []*policy.Policy{policy.Must(policy.New("p", tc.a, remote))}, middleware.WithClock(clock))
				twin := middleware.MustNew(storetest.New(t, name, clock), []*policy.Policy{policy.Must(policy.New("p", tc.a, remote))}, middleware.WithClock(clock))
				h, ht := routed(router, m), routed(router, twin)
				clock.Advance(10 * time.Second)
				if got, gt := admittedOf(h, tc.useA), admittedOf(ht, tc.useA); got != tc.useA || gt != tc.useA {
					t.Fatalf("under %v: %d and %d of %d", tc.a, got, gt, tc.useA)
				}
				for _, mm := range []*middleware.Middleware{m, twin} {
					if err := mm.SetPolicies([]*policy.Policy{policy.Must(policy.New("p", tc.b, remote))}); err != nil {
						t.Fatal(err)
					}
				}
				if got, gt := admittedOf(h, tc.useB), admittedOf(ht, tc.useB); got != tc.useB || gt != tc.useB {
					t.Fatalf("under %v: %d and %d of %d", tc.b, got, gt, tc.useB)
				}
				if err := m.SetPolicies([]*policy.Policy{policy.Must(policy.New("p", tc.c, remote))}); err != nil {
					t.Fatal(err)
				}
				got, want := admittedOf(h, 30), admittedOf(ht, 30)
				if c := int(tc.c.Capacity()); want > c {
					want = c
				}
				if got > want {
					t.Errorf("tightened again to %v (guards %v): %d of 30 admitted at once; without that reload, under %v, %d",
						tc.c, m.Set().Policy(0).Guards(), got, tc.b, want)
				}
			})
		}
	}
}
