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

// TestDropOwnEach: DropOwn leaves out a guarded policy's own check and
// keeps its guards', the converse of DropGuard, for a middleware nested
// in one that counted the request under the policy's Spec alone: a (at 4,
// guarded by its configured 6 and a reload's replaced 10) is checked
// under its first guard kept in its own place, its other after the
// policies'. With its guards all dropped too, or for a policy without a
// guard (c), the own check stays; after the next Prepare it counts again.
// a's first guard, of its window kind and shape, is folded into its own
// check (6 in its place, judged at 4), as when its own check is dropped.
func TestDropOwnEach(t *testing.T) {
	fw := func(l int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: l, Window: time.Minute}
	}
	a := policy.Must(policy.Must(policy.Must(policy.New("a", fw(6), constKey)).WithGuard(fw(10))).WithLimit(4))
	b := policy.Must(policy.Must(policy.New("b", fw(5), constKey)).WithGuard(fw(10)))
	c := policy.Must(policy.New("c", fw(3), constKey))
	s, err := policy.NewSet([]*policy.Policy{a, b, c})
	if err != nil {
		t.Fatal(err)
	}
	type drop struct {
		mask uint64
		k    int // -1: DropOwn
	}
	for _, tc := range []struct {
		drops []drop
		want  string
	}{
		{nil, "[6 5 3 10 10]"},
		{[]drop{{1, -1}}, "[6 5 3 10 10]"},
		{[]drop{{2, -1}}, "[6 10 3 10]"},
		{[]drop{{7, -1}}, "[6 10 3 10]"},
		{[]drop{{4, -1}}, "[6 5 3 10 10]"},
		{[]drop{{1, -1}, {1, 0}}, "[10 5 3 10]"},
		{[]drop{{1, -1}, {1, 1}}, "[6 5 3 10]"},
		{[]drop{{1, 0}, {3, -1}, {1, 1}}, "[4 10 3]"},
		{[]drop{{3, -1}, {2, 0}}, "[6 5 3 10]"},
	} {
		now := time.Unix(1_700_000_040, 0)
		st := &limitsStore{Store: memoryStoreAt(t, &now)}
		r := httptest.NewRequest("GET", "/", nil)
		var res policy.Result
		if err := s.Prepare(r, s.Match(r), &res); err != nil {
			t.Fatal(err)
		}
		for _, d := range tc.drops {
			if d.k < 0 {
				nest.DropOwn(&res, d.mask)
			} else {
				nest.DropGuard(&res, d.mask, d.k)
			}
		}
		if err := res.Take(context.Background(), st); err != nil {
			t.Fatal(err)
		}
		if err := s.Prepare(r, s.Match(r), &res); err != nil {
			t.Fatal(err)
		}
		if err := res.Take(context.Background(), st); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(st.calls); got != "["+tc.want+" [6 5 3 10 10]]" {
			t.Errorf("drops %v: store calls of limits %s, want %s, then all after Prepare", tc.drops, got, tc.want)
		}
	}
}

// TestDropOwnDecidesUnderTheGuard: a policy lowered from 10 to 8 whose
// own check is dropped is decided by its guard alone, judged at the
// policy's 8: after 7 of 10 under the configured Spec, one more is
// admitted (the last the guard holds below 8, Limit 8) and the next
// denied, though its own 8 holds all; Peek reports the same and consumes
// nothing; DecisionUnder has the guard's decision and none under the
// dropped Spec. The own state counted nothing.
func TestDropOwnDecidesUnderTheGuard(t *testing.T) {
	now := time.Unix(1_700_000_040, 0)
	st := memoryStoreAt(t, &now)
	configured, lowered := guardedSet(t, algorithms.FixedWindow, 8)
	takeN(t, configured, st, 7)
	r := httptest.NewRequest("GET", "/", nil)
	var res policy.Result
	prepare := func() {
		t.Helper()
		if err := lowered.Prepare(r, lowered.Match(r), &res); err != nil {
			t.Fatal(err)
		}
		nest.DropOwn(&res, 1)
	}
	prepare()
	if err := res.Peek(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if d := res.Decision(0); !d.Allowed || d.Remaining != 1 || d.Limit != 8 {
		t.Errorf("peek under the guard after 7 of 10: %+v, want allowed, Remaining 1, Limit 8", d)
	}
	prepare()
	if err := res.Take(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if d := res.Decision(0); !d.Allowed || d.Remaining != 0 || d.Limit != 8 {
		t.Errorf("take under the guard after 7 of 10: %+v, want allowed, Remaining 0, Limit 8", d)
	}
	guard := res.Policy(0).Guards()[0]
	if d, ok := nest.DecisionUnder(&res, 0, guard); !ok || d.Remaining != 0 {
		t.Errorf("DecisionUnder(guard) = %+v, %v; want Remaining 0, true", d, ok)
	}
	if d, ok := nest.DecisionUnder(&res, 0, res.Policy(0).Spec()); ok {
		t.Errorf("DecisionUnder(own Spec) = %+v, true; want false (dropped)", d)
	}
	prepare()
	if err := res.Take(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	if d := res.Decision(0); d.Allowed || d.RetryAfter != time.Minute {
		t.Errorf("take under the spent guard: %+v, want denied, RetryAfter 1m (the window's end)", d)
	}
	// The own state (8) counted none of them: reset the guard's, and 8
	// are admitted.
	if err := configured.Prepare(r, configured.Match(r), &res); err != nil {
		t.Fatal(err)
	}
	if err := res.Reset(context.Background(), st, 1); err != nil {
		t.Fatal(err)
	}
	if n, _ := takeN(t, lowered, st, 9); n != 8 {
		t.Errorf("after the guard's reset: %d of 9 admitted at 8, want 8 (none counted under the dropped Spec)", n)
	}
}

// TestDropOwnGiveBackAndRefund: a give-back (CountIf) and a refund (a held
// leaky_queue request that leaves) of a policy whose own check is dropped
// give back under its guard, which alone counted.
func TestDropOwnGiveBackAndRefund(t *testing.T) {
	t.Run("GiveBack", func(t *testing.T) {
		now := time.Unix(1_700_000_040, 0)
		st := memoryStoreAt(t, &now)
		configured, lowered := guardedSet(t, algorithms.FixedWindow, 8)
		takeN(t, configured, st, 6)
		r := httptest.NewRequest("GET", "/", nil)
		res := preparedResult(t, lowered, r)
		nest.DropOwn(res, 1)
		if err := res.Take(context.Background(), st); err != nil {
			t.Fatal(err)
		}
		if err := res.GiveBack(context.Background(), st, 0, 1); err != nil {
			t.Fatal(err)
		}
		if d := res.Decision(0); !res.Given(0) || d.Remaining != 2 || d.Limit != 8 {
			t.Errorf("after the give-back: Given %v, %+v; want given, Remaining 2, Limit 8 (the guard's, 6 used, judged at 8)", res.Given(0), d)
		}
		if d := takeResult(t, configured, st, r).Decision(0); d.Remaining != 3 {
			t.Errorf("under the guard's Spec after the give-back: Remaining %d, want 3 (6 and this one counted)", d.Remaining)
		}
	})
	t.Run("Refund", func(t *testing.T) {
		now := time.Unix(1_700_000_040, 0)
		st := memoryStoreAt(t, &now)
		configured, lowered := guardedSet(t, algorithms.LeakyQueue, 5)
		takeN(t, configured, st, 3)
		r := httptest.NewRequest("GET", "/", nil)
		res := preparedResult(t, lowered, r)
		nest.DropOwn(res, 1)
		if err := res.Take(context.Background(), st); err != nil {
			t.Fatal(err)
		}
		if d := res.Decision(0); !d.Allowed || d.Delay != 18*time.Second {
			t.Fatalf("behind 3 queued in the guard's queue: %+v, want allowed with Delay 18s", d)
		}
		if err := res.Refund(context.Background(), st, 0); err != nil {
			t.Fatal(err)
		}
		if !res.Refunded() || !res.Given(0) {
			t.Errorf("Refunded %v, Given %v; want both", res.Refunded(), res.Given(0))
		}
		if d := takeResult(t, configured, st, r).Decision(0); d.Delay != 18*time.Second {
			t.Errorf("the guard's queue after the refund: Delay %v, want 18s (its place came back)", d.Delay)
		}
	})
}
