package policy_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestWithGuardMany: WithGuard adds its Spec to those given before, up
// to policy.MaxCarries, in the order given; a Spec given already, the
// policy's own or the guard WithLimit gave it adds none; one past
// MaxCarries is an error. A copy made by WithLimit keeps each that still
// holds it, and Unguarded drops them all.
func TestWithGuardMany(t *testing.T) {
	tb := func(limit, burst int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: limit, Window: time.Minute, Burst: burst}
	}
	p := policy.Must(policy.New("p", tb(20, 4), constKey))
	g := policy.Must(p.WithGuard(tb(20, 0)))
	g = policy.Must(g.WithGuard(tb(20, 10)))
	g = policy.Must(g.WithGuard(tb(20, 10))) // given already
	g = policy.Must(g.WithGuard(tb(20, 6)))
	if gs, want := g.Guards(), []algorithms.Spec{tb(20, 0), tb(20, 10), tb(20, 6)}; !slices.Equal(gs, want) {
		t.Fatalf("Guards() = %v, want %v", gs, want)
	}
	if first, ok := g.Guard(); !ok || first != tb(20, 0) {
		t.Errorf("Guard() = %v, %v, want the first given", first, ok)
	}
	full := g
	for b := int64(11); len(full.Guards()) < policy.MaxCarries; b++ {
		full = policy.Must(full.WithGuard(tb(20, b)))
	}
	if _, err := full.WithGuard(tb(20, 5)); err == nil {
		t.Errorf("a guard past MaxCarries (%d): no error", policy.MaxCarries)
	}
	// Lowered to 10 (burst 2): guarded by the configured 20 burst 4, and
	// by each given Spec above 10.
	l := policy.Must(g.WithLimit(10))
	if gs, want := l.Guards(), []algorithms.Spec{tb(20, 4), tb(20, 0), tb(20, 10), tb(20, 6)}; !slices.Equal(gs, want) {
		t.Errorf("lowered: Guards() = %v, want %v", gs, want)
	}
	if gs := len(l.Guards()); gs > policy.MaxGuards {
		t.Errorf("%d guards, past MaxGuards (%d)", gs, policy.MaxGuards)
	}
	// Given its own Spec, or the guard WithLimit gave it: none more.
	if gs := policy.Must(l.WithGuard(tb(20, 4))).Guards(); len(gs) != 4 {
		t.Errorf("given its configured Spec: Guards() = %v, want the four", gs)
	}
	if gs := policy.Must(g.WithGuard(tb(20, 4))).Guards(); len(gs) != 3 {
		t.Errorf("given its own Spec: Guards() = %v, want the three", gs)
	}
	if gs := l.Unguarded().Guards(); len(gs) != 0 {
		t.Errorf("Unguarded: Guards() = %v, want none", gs)
	}
}

// TestDropGuardThird: a policy of four guards (lowered, and three
// reloads' replaced Specs) has each checked in the store call, in the
// order of Guards, and each dropped apart by its index; with all four
// dropped the store call holds its own check alone.
func TestDropGuardThird(t *testing.T) {
	tb := func(limit, burst int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: limit, Window: time.Minute, Burst: burst}
	}
	p := policy.Must(policy.New("p", tb(20, 4), constKey))
	for _, s := range []algorithms.Spec{tb(21, 0), tb(22, 10), tb(23, 6)} {
		p = policy.Must(p.WithGuard(s))
	}
	p = policy.Must(p.WithLimit(10))
	s, err := policy.NewSet([]*policy.Policy{p})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		drop []int
		want string
	}{
		{nil, "[10 20 21 22 23]"},
		{[]int{2}, "[10 20 21 23]"},
		{[]int{3}, "[10 20 21 22]"},
		{[]int{0, 2}, "[10 21 23]"},
		{[]int{0, 1, 2, 3}, "[10]"},
		{[]int{4}, "[10 20 21 22 23]"}, // no guard of that index
	} {
		now := time.Unix(1_700_000_040, 0)
		st := &limitsStore{Store: memoryStoreAt(t, &now)}
		r := httptest.NewRequest("GET", "/", nil)
		var res policy.Result
		if err := s.Prepare(r, s.Match(r), &res); err != nil {
			t.Fatal(err)
		}
		for _, k := range tc.drop {
			nest.DropGuard(&res, 1, k)
		}
		if err := res.Take(context.Background(), st); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(st.calls); got != "["+tc.want+"]" {
			t.Errorf("drops %v: store calls of limits %s, want one of %s", tc.drop, got, tc.want)
		}
		if d := res.Decision(0); !d.Allowed {
			t.Errorf("drops %v: denied", tc.drop)
		}
	}
}
