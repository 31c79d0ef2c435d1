package policy_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/policy"
)

// limitsStore records the limits of each store call's checks.
type limitsStore struct {
	algorithms.Store
	calls [][]int64
}

func (s *limitsStore) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	var ls []int64
	for _, c := range checks {
		ls = append(ls, c.Spec.Limit)
	}
	s.calls = append(s.calls, ls)
	return s.Store.Take(ctx, checks...)
}

// TestDropGuardEach: DropGuard leaves out one guard of a policy of two
// (a lowered copy of a policy a reload tightened: its configured Spec,
// 6, and the replaced one, 10), for a middleware nested in one that
// counted the request under that Spec alone; the other guard still
// counts. A policy of one guard (b, a reload's only: 10) loses it to
// DropGuard(_, 0) and keeps it under DropGuard(_, 1), which names no
// guard of it. With every guard dropped, the store call holds the
// policies' own checks alone. a's first guard, of its window kind and
// shape, is folded into its own check (6 in its place, judged at 4)
// unless dropped.
func TestDropGuardEach(t *testing.T) {
	fw := func(l int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: l, Window: time.Minute}
	}
	a := policy.Must(policy.Must(policy.Must(policy.New("a", fw(6), constKey)).WithGuard(fw(10))).WithLimit(4))
	b := policy.Must(policy.Must(policy.New("b", fw(5), constKey)).WithGuard(fw(10)))
	s, err := policy.NewSet([]*policy.Policy{a, b})
	if err != nil {
		t.Fatal(err)
	}
	type drop struct {
		mask uint64
		k    int
	}
	for _, tc := range []struct {
		drops []drop
		want  string
	}{
		{nil, "[6 5 10 10]"},
		{[]drop{{1, 0}}, "[4 5 10 10]"},
		{[]drop{{1, 1}}, "[6 5 10]"},
		{[]drop{{3, 1}}, "[6 5 10]"},
		{[]drop{{2, 0}}, "[6 5 10]"},
		{[]drop{{3, 0}}, "[4 5 10]"},
		{[]drop{{1, 0}, {1, 1}, {2, 0}}, "[4 5]"},
	} {
		now := time.Unix(1_700_000_040, 0)
		st := &limitsStore{Store: memoryStoreAt(t, &now)}
		r := httptest.NewRequest("GET", "/", nil)
		var res policy.Result
		if err := s.Prepare(r, s.Match(r), &res); err != nil {
			t.Fatal(err)
		}
		for _, d := range tc.drops {
			nest.DropGuard(&res, d.mask, d.k)
		}
		if err := res.Take(context.Background(), st); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(st.calls); got != "["+tc.want+"]" {
			t.Errorf("drops %v: store calls of limits %s, want one of %s", tc.drops, got, tc.want)
		}
	}
}

// TestDropGuardFoldedBesideRoom: a window kind's lowered copy (a, 10 to
// 5) is checked once, on its configured 10 judged at 5; its guard dropped
// (DropGuard), it is checked under its own 5 alone, also when another
// policy of the Result (b, a token bucket lowered from 10 to 5, whose
// guard is checked apart) makes its store call the guard room's. With
// DropOwn too, a keeps its own check (its only guard is dropped).
func TestDropGuardFoldedBesideRoom(t *testing.T) {
	fw := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}
	tb := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Minute}
	a := policy.Must(policy.Must(policy.New("a", fw, constKey)).WithLimit(5))
	b := policy.Must(policy.Must(policy.New("b", tb, constKey)).WithLimit(5))
	s, err := policy.NewSet([]*policy.Policy{a, b})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name       string
		drop       func(res *policy.Result)
		want       string
		foldedA    bool
		remainingA int64
	}{
		{"none", func(*policy.Result) {}, "[10 5 10]", true, 4},
		{"a's guard", func(res *policy.Result) { nest.DropGuard(res, 1, 0) }, "[5 5 10]", false, 4},
		{"a's guard and own", func(res *policy.Result) { nest.DropGuard(res, 1, 0); nest.DropOwn(res, 1) }, "[5 5 10]", false, 4},
		{"a's own", func(res *policy.Result) { nest.DropOwn(res, 1) }, "[10 5 10]", true, 4},
	} {
		now := time.Unix(1_700_000_040, 0)
		st := &limitsStore{Store: memoryStoreAt(t, &now)}
		r := httptest.NewRequest("GET", "/", nil)
		var res policy.Result
		if err := s.Prepare(r, s.Match(r), &res); err != nil {
			t.Fatal(err)
		}
		tc.drop(&res)
		if err := res.Take(context.Background(), st); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(st.calls); got != "["+tc.want+"]" {
			t.Errorf("%s: store calls of limits %s, want one of %s", tc.name, got, tc.want)
		}
		if got := nest.Folded(&res, 0); got != tc.foldedA {
			t.Errorf("%s: Folded(a) = %v, want %v", tc.name, got, tc.foldedA)
		}
		if nest.Folded(&res, 1) {
			t.Errorf("%s: Folded(b) = true, want false (a token bucket)", tc.name)
		}
		if d := res.Decision(0); !d.Allowed || d.Limit != 5 || d.Remaining != tc.remainingA {
			t.Errorf("%s: a's decision %+v, want allowed, Limit 5, Remaining %d", tc.name, d, tc.remainingA)
		}
	}
}
