package policy_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestDecisionUnder: a guarded policy's Decision is its own merged with
// its guards'; DecisionUnder gives each apart, by Spec: a policy lowered
// to 2 (guarded by its configured 4) with one unit used under the 4
// before, and a reload's 10 besides, after one request: 0 under the 4
// and 1 under the 10, both judged at 2 (their Limit 2), and the merged 0;
// the 4, of the policy's window kind and shape, is folded into its own
// check, so that its decision under its own 2 is the 4's at 2. A guard dropped
// (DropGuard) was not checked, and has none; nor has a Spec the policy
// does not count under, nor a Result not taken. An unguarded policy has
// its own decision.
func TestDecisionUnder(t *testing.T) {
	fw := func(l int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: l, Window: time.Minute}
	}
	four := policy.Must(policy.New("a", fw(4), constKey))
	a := policy.Must(policy.Must(four.WithGuard(fw(10))).WithLimit(2))
	b := policy.Must(policy.New("b", fw(5), constKey))
	for _, drop := range []bool{false, true} {
		store, err := algorithms.NewMemoryStore(algorithms.WithClock(algotest.NewClock(time.Unix(1_700_000_040, 0))))
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		s, err := policy.NewSet([]*policy.Policy{a, b})
		if err != nil {
			t.Fatal(err)
		}
		// One unit under the 4 before (the configured policy's).
		one, _ := policy.NewSet([]*policy.Policy{four})
		for range 1 {
			var pre policy.Result
			if err := one.Prepare(httptest.NewRequest("GET", "/", nil), 1, &pre); err != nil {
				t.Fatal(err)
			}
			if err := pre.Take(context.Background(), store); err != nil {
				t.Fatal(err)
			}
		}
		var res policy.Result
		if err := s.Prepare(httptest.NewRequest("GET", "/", nil), 3, &res); err != nil {
			t.Fatal(err)
		}
		if _, ok := nest.DecisionUnder(&res, 0, fw(2)); ok {
			t.Errorf("drop %v: a decision before Take", drop)
		}
		if drop {
			nest.DropGuard(&res, 1, 1) // the 10
		}
		if err := res.Take(context.Background(), store); err != nil {
			t.Fatal(err)
		}
		tenLeft := int64(1)
		if drop {
			tenLeft = -1 // not checked
		}
		for _, tc := range []struct {
			i     int
			spec  algorithms.Spec
			left  int64 // -1: none
			limit int64 // the decision's: a guard's judged at the policy's
		}{
			{0, fw(2), 0, 2}, // folded: the 4's, judged at 2
			{0, fw(4), 0, 2},
			{0, fw(10), tenLeft, 2},
			{0, fw(5), -1, 0},
			{1, fw(5), 4, 5},
			{1, fw(4), -1, 0},
		} {
			d, ok := nest.DecisionUnder(&res, tc.i, tc.spec)
			if tc.left < 0 {
				if ok {
					t.Errorf("drop %v: DecisionUnder(%d, %d) = %+v, want none", drop, tc.i, tc.spec.Limit, d)
				}
				continue
			}
			if !ok || d.Remaining != tc.left || !d.Allowed || d.Limit != tc.limit {
				t.Errorf("drop %v: DecisionUnder(%d, %d) = %+v, %v; want %d left of %d, allowed", drop, tc.i, tc.spec.Limit, d, ok, tc.left, tc.limit)
			}
		}
		if got := res.Decision(0).Remaining; got != 0 {
			t.Errorf("drop %v: merged decision %d left", drop, got)
		}
	}
}
