package policy_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/resultroom"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestResultCopyGiveBack: a copy of a taken Result (resultroom.Copy, which
// package middleware gives back on, as a middleware further in may still
// read the Result it passed on) reads as the Result did; a GiveBack of the
// copy gives the units back to the store and changes the copy alone: the
// Result keeps its decisions, GaveBack false. With a policy guarded by
// the Spec it was lowered from (WithLimit), whose store calls are the
// guard room's, and without.
func TestResultCopyGiveBack(t *testing.T) {
	key := func(*http.Request) (string, error) { return "k", nil }
	for _, guarded := range []bool{false, true} {
		t.Run(map[bool]string{false: "unguarded", true: "guarded"}[guarded], func(t *testing.T) {
			now := time.Unix(1_700_000_040, 0)
			store := memoryStoreAt(t, &now)
			// A token bucket's guard is checked apart from its own
			// state (a window kind's is folded into it).
			login := policy.Must(policy.New("login", algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Minute, Burst: 5}, key, policy.CountIf(policy.CountFailed)))
			if guarded {
				login = policy.Must(login.WithLimit(3))
			}
			perIP := policy.Must(policy.New("ip", algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 4, Window: time.Minute}, key))
			s, err := policy.NewSet([]*policy.Policy{perIP, login})
			if err != nil {
				t.Fatal(err)
			}
			res := takeResult(t, s, store, httptest.NewRequest("POST", "/login", nil))
			ip, before := res.Decision(0), res.Decision(1)
			cp := new(policy.Result)
			resultroom.Copy(cp, res)
			if cp.Len() != res.Len() || cp.Key(1) != res.Key(1) || cp.Decision(0) != ip || cp.Decision(1) != before || !cp.Allowed() || cp.Mask() != res.Mask() {
				t.Fatalf("copy: Len %d, key %q, decisions %+v %+v; want the Result's: %d, %q, %+v %+v", cp.Len(), cp.Key(1), cp.Decision(0), cp.Decision(1), res.Len(), res.Key(1), ip, before)
			}
			if err := cp.GiveBack(context.Background(), store, 0, 0b10); err != nil {
				t.Fatal(err)
			}
			if !cp.GaveBack() || !cp.Given(1) || cp.Decision(1).Remaining != before.Remaining+1 || cp.Decision(0) != ip {
				t.Errorf("copy after GiveBack: GaveBack %v, Given %v, login %+v (was %+v), ip %+v; want login's unit back", cp.GaveBack(), cp.Given(1), cp.Decision(1), before, cp.Decision(0))
			}
			if res.GaveBack() || res.Given(1) || res.Decision(1) != before || res.Decision(0) != ip {
				t.Errorf("the Result after its copy's GiveBack: GaveBack %v, Given %v, login %+v, ip %+v; want it as taken (%+v, %+v)", res.GaveBack(), res.Given(1), res.Decision(1), res.Decision(0), before, ip)
			}
			// The store has the unit back: the next request finds login
			// as the first did.
			next := takeResult(t, s, store, httptest.NewRequest("POST", "/login", nil))
			if got := next.Decision(1).Remaining; got != before.Remaining {
				t.Errorf("next login Remaining %d, want %d (the unit given back)", got, before.Remaining)
			}
		})
	}
}
