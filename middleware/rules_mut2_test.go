package middleware_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestSetLimitInForceDoesNothing: setting the limit in force, or 0 (the
// configured limit) when no other is set, changes nothing: the rule set in
// force stays the very same one, not a rebuilt copy.
func TestSetLimitInForceDoesNothing(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("a", 10, time.Minute, remote)})
	before := m.Set()
	for _, limit := range []int64{10, 0} {
		if err := m.SetLimit("a", limit); err != nil {
			t.Fatal(err)
		}
		if m.Set() != before {
			t.Errorf("SetLimit(a, %d) with 10 in force and none set rebuilt the rule set", limit)
		}
	}
}

// TestSetPoliciesCarriedLimitAtLeastOne: an effective limit carried to a
// new configured limit in proportion is rounded down but never below 1
// (1 of 100, carried to 50, is 1, not 0 nor the new configured 50).
func TestSetPoliciesCarriedLimitAtLeastOne(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("a", 100, time.Minute, remote)})
	if err := m.SetLimit("a", 1); err != nil {
		t.Fatal(err)
	}
	if err := m.SetPolicies([]*policy.Policy{fixed("a", 50, time.Minute, remote)}); err != nil {
		t.Fatal(err)
	}
	if got := m.Set().Policy(0).Spec().Limit; got != 1 {
		t.Errorf("effective limit %d after the swap, want 1 (1 of 100 carried to 50, at least 1)", got)
	}
}
