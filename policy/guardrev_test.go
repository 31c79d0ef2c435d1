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
// request): the guard, of the policy's window kind and shape, is folded
// into its check again, which counts under the 10 (judged at 8) alone.
func TestDropGuardsUntilNextPrepare(t *testing.T) {
	now := time.Unix(1_700_000_040, 0)
	st := &countingStore{Store: memoryStoreAt(t, &now)}
	_, lowered := guardedSet(t, algorithms.FixedWindow, 8)
	r := httptest.NewRequest("GET", "/", nil)
	var res policy.Result
	if err := lowered.Prepare(r, lowered.Match(r), &res); err != nil {
		t.Fatal(err)
	}
	dropGuards(&res, 1)
	if err := res.Take(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if err := lowered.Prepare(r, lowered.Match(r), &res); err != nil {
		t.Fatal(err)
	}
	if err := res.Take(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if len(st.checks) != 2 || st.checks[0] != 1 || st.checks[1] != 1 {
		t.Errorf("checks per store call %v, want [1 1]: the guard dropped, then folded again after Prepare", st.checks)
	}
	if d := res.Decision(0); d.Remaining != 7 || d.Limit != 8 {
		t.Errorf("second Take at limit 8: %+v, want Limit 8, Remaining 7 (one counted under the 10, the first under the 8 alone)", d)
	}
}

// TestDropGuardsKeptWhenTheRoomIsReplaced: a guard dropped by DropGuards
// stays left out when Take replaces the guard room, too small for the
// store call of the guards still in (1e4b8b0's newGuardRoom): DropGuards
// on a Result without a room gives it an empty one. Two lowered policies,
// a's guard dropped: one store call of a, b and b's guard. (They are
// token buckets: a window kind's guard is folded into its policy's check,
// with no room.)
func TestDropGuardsKeptWhenTheRoomIsReplaced(t *testing.T) {
	now := time.Unix(1_700_000_040, 0)
	st := &countingStore{Store: memoryStoreAt(t, &now)}
	tb := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Minute}
	a := policy.Must(policy.New("a", tb, constKey))
	b := policy.Must(policy.New("b", tb, constKey))
	s, err := policy.NewSet([]*policy.Policy{policy.Must(a.WithLimit(5)), policy.Must(b.WithLimit(5))})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	var res policy.Result
	if err := s.Prepare(r, s.Match(r), &res); err != nil {
		t.Fatal(err)
	}
	dropGuards(&res, 1)
	if err := res.Take(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if st.calls != 1 || st.checks[0] != 3 {
		t.Errorf("store calls %d of %v checks, want one of 3 (a, b, b's guard: a's dropped)", st.calls, st.checks)
	}
}
