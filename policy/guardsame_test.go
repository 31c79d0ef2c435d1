package policy_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestWithGuardOfAStateAlreadyCounted: a guard whose Spec is the policy's
// own, or a guard it already has, would check and count the request twice
// in one state (one store call of two checks on the same key and Spec):
// WithGuard adds no such guard, and the request counts once.
func TestWithGuardOfAStateAlreadyCounted(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}
	p := policy.Must(policy.New("fw", spec, constKey))
	lowered := policy.Must(p.WithLimit(6)) // guarded by spec
	for _, c := range []struct {
		name string
		p    *policy.Policy
		g    algorithms.Spec
		want int
	}{
		{"its own Spec", p, spec, 0},
		{"the lowered copy's own Spec", lowered, lowered.Spec(), 1},
		{"the guard it has", lowered, spec, 1},
	} {
		g := policy.Must(c.p.WithGuard(c.g))
		if gs := g.Guards(); len(gs) != c.want {
			t.Errorf("%s: Guards() = %+v, want %d guard(s)", c.name, gs, c.want)
		}
		now := time.Unix(1_700_000_040, 0) // 40 s into a minute
		st := memoryStoreAt(t, &now)
		set, err := policy.NewSet([]*policy.Policy{g})
		if err != nil {
			t.Fatal(err)
		}
		res := takeResult(t, set, st, httptest.NewRequest("GET", "/", nil))
		d := res.Decision(0)
		want := c.p.Spec().Limit - 1
		if !d.Allowed || d.Remaining != want {
			t.Errorf("%s: first request %+v, want allowed with Remaining %d (counted once)", c.name, d, want)
		}
	}
}
