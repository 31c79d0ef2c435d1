package policy_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestDropGuardsUntilNextPrepare: a Result told to leave a guard out
// (DropGuards, for a middleware nested in one that counted the request
// under the guard's Spec already) takes its policy's check alone, and a
// reused Result counts the guard again after its next Prepare (a pooled
// Result of a middleware WithoutContext must not carry it to another
// request).
func TestDropGuardsUntilNextPrepare(t *testing.T) {
	now := time.Unix(1_700_000_040, 0)
	st := &countingStore{Store: memoryStoreAt(t, &now)}
	_, lowered := guardedSet(t, algorithms.FixedWindow, 8)
	r := httptest.NewRequest("GET", "/", nil)
	var res policy.Result
	if err := lowered.Prepare(r, lowered.Match(r), &res); err != nil {
		t.Fatal(err)
	}
	res.DropGuards(1)
	if err := res.Take(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if err := lowered.Prepare(r, lowered.Match(r), &res); err != nil {
		t.Fatal(err)
	}
	if err := res.Take(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if len(st.checks) != 2 || st.checks[0] != 1 || st.checks[1] != 2 {
		t.Errorf("checks per store call %v, want [1 2]: the guard dropped, then counted again after Prepare", st.checks)
	}
	if d := res.Decision(0); d.Remaining != 6 {
		t.Errorf("second Take at limit 8: Remaining %d, want 6 (two counted under the lowered Spec)", d.Remaining)
	}
}

// TestDropGuardsKeptWhenTheRoomIsReplaced: a guard dropped by DropGuards
// stays left out when Take replaces the guard room, too small for the
// store call of the guards still in (1e4b8b0's newGuardRoom): DropGuards
// on a Result without a room gives it an empty one. Two lowered policies,
// a's guard dropped: one store call of a, b and b's guard.
func TestDropGuardsKeptWhenTheRoomIsReplaced(t *testing.T) {
	now := time.Unix(1_700_000_040, 0)
	st := &countingStore{Store: memoryStoreAt(t, &now)}
	a := policy.Must(policy.PerMinute("a", 10, constKey))
	b := policy.Must(policy.PerMinute("b", 10, constKey))
	s, err := policy.NewSet([]*policy.Policy{policy.Must(a.WithLimit(5)), policy.Must(b.WithLimit(5))})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	var res policy.Result
	if err := s.Prepare(r, s.Match(r), &res); err != nil {
		t.Fatal(err)
	}
	res.DropGuards(1)
	if err := res.Take(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if st.calls != 1 || st.checks[0] != 3 {
		t.Errorf("store calls %d of %v checks, want one of 3 (a, b, b's guard: a's dropped)", st.calls, st.checks)
	}
}
