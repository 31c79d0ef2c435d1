package policy_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/storetest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestDropOwnStatesEachStore: a policy lowered to 4 from its configured 6
// and guarded by a reload's 10 too, its own check dropped (DropOwn) alone
// or with its first guard, its second, or both (DropGuard), on the memory
// store and on Redis: its decision's Limit and Remaining (each guard
// judged at the policy's 4, of which one is used), the units
// counted under each Spec (peeked under a policy of the Spec alone), the
// Spec DecisionUnder has a decision under, and after a GiveBack of the
// request every state as before it; a Result reused (Prepare) counts
// under every guard again (not under its own 4: the 6 is folded into its
// check, judged at 4, see policy.Policy.GuardLimit), and Reset forgets
// every state.
func TestDropOwnStatesEachStore(t *testing.T) {
	fw := func(l int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: l, Window: time.Minute}
	}
	a := policy.Must(policy.Must(policy.Must(policy.New("a", fw(6), constKey)).WithGuard(fw(10))).WithLimit(4))
	set, err := policy.NewSet([]*policy.Policy{a})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range storetest.Names {
		t.Run(name, func(t *testing.T) {
			clock := algotest.NewClock(time.Unix(1_700_000_040, 0))
			st := storetest.New(t, name, clock)
			ctx := context.Background()
			r := httptest.NewRequest("GET", "/", nil)
			// used returns the units counted under each of 4, 6, 10.
			used := func() string {
				t.Helper()
				var out []int64
				for _, l := range []int64{4, 6, 10} {
					s, err := policy.NewSet([]*policy.Policy{policy.Must(policy.New("a", fw(l), constKey))})
					if err != nil {
						t.Fatal(err)
					}
					var pk policy.Result
					if err := s.Prepare(r, 1, &pk); err != nil {
						t.Fatal(err)
					}
					if err := pk.Peek(ctx, st); err != nil {
						t.Fatal(err)
					}
					out = append(out, l-pk.Decision(0).Remaining)
				}
				return fmt.Sprint(out)
			}
			for _, tc := range []struct {
				name      string
				drop      []int // the guards dropped too
				limit     int64 // the decision's
				remaining int64
				counted   string // under 4, 6, 10
			}{
				// Each guard judged at the policy's 4.
				{"own", nil, 4, 3, "[0 1 1]"},
				{"own and first guard", []int{0}, 4, 3, "[0 0 1]"},
				{"own and second guard", []int{1}, 4, 3, "[0 1 0]"},
				{"own and both guards: own kept", []int{0, 1}, 4, 3, "[1 0 0]"},
			} {
				var res policy.Result
				if err := set.Prepare(r, 1, &res); err != nil {
					t.Fatal(err)
				}
				nest.DropOwn(&res, 1)
				for _, k := range tc.drop {
					nest.DropGuard(&res, 1, k)
				}
				if err := res.Take(ctx, st); err != nil {
					t.Fatal(err)
				}
				if d := res.Decision(0); !d.Allowed || d.Limit != tc.limit || d.Remaining != tc.remaining {
					t.Errorf("%s: decision %+v, want allowed, Limit %d, Remaining %d", tc.name, d, tc.limit, tc.remaining)
				}
				if got := used(); got != tc.counted {
					t.Errorf("%s: counted under 4, 6, 10: %s, want %s", tc.name, got, tc.counted)
				}
				for k, l := range []int64{4, 6, 10} {
					d, ok := nest.DecisionUnder(&res, 0, fw(l))
					if want := tc.counted[1+2*k] == '1'; ok != want || ok && (d.Limit != 4 || d.Remaining != 3) {
						t.Errorf("%s: DecisionUnder(%d) = %+v, %v; want a decision %v", tc.name, l, d, ok, want)
					}
				}
				if err := res.GiveBack(ctx, st, 0, 1); err != nil {
					t.Fatal(err)
				}
				if got := used(); !res.Given(0) || got != "[0 0 0]" {
					t.Errorf("%s: after the give-back (given %v): counted %s, want none", tc.name, res.Given(0), got)
				}
				// Reused: every Spec counts again.
				if err := set.Prepare(r, 1, &res); err != nil {
					t.Fatal(err)
				}
				if err := res.Take(ctx, st); err != nil {
					t.Fatal(err)
				}
				if got := used(); got != "[0 1 1]" {
					t.Errorf("%s: reused: counted %s, want [0 1 1]", tc.name, got)
				}
				if err := res.Reset(ctx, st, 1); err != nil {
					t.Fatal(err)
				}
				if got := used(); got != "[0 0 0]" {
					t.Errorf("%s: after Reset: counted %s, want none", tc.name, got)
				}
			}
		})
	}
}
