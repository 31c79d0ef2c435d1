package policy_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestPrepareNamesEveryPolicyTheCostExceeds: a request whose cost is
// above the capacity of several of its policies gets one *CostError that
// names them all, in Set order: its Policy and Cost are the first's (what
// errors.As callers read), and its text gives each policy's cost and
// capacity. A policy left out for want of a key (SkipPolicy) is not named;
// policies sharing a key function still call it once.
func TestPrepareNamesEveryPolicyTheCostExceeds(t *testing.T) {
	calls := 0
	addr := keyfunc.Func(func(r *http.Request) (string, error) { calls++; return r.RemoteAddr, nil })
	byUser := keyfunc.Func(func(r *http.Request) (string, error) {
		if u := r.Header.Get("X-User"); u != "" {
			return u, nil
		}
		return "", keyfunc.ErrNoUser
	})
	cost := policy.WithCost(func(r *http.Request) int64 {
		n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
		return n
	})
	spec := func(limit int64) algorithms.Spec {
		return algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: limit, Window: time.Minute}
	}
	a := policy.Must(policy.New("a", spec(10), addr, cost))
	users := policy.Must(policy.New("users", spec(3), byUser, cost, policy.OnKeyError(policy.SkipPolicy)))
	roomy := policy.Must(policy.New("roomy", spec(100), addr, cost))
	e := policy.Must(policy.New("e", spec(5), addr, cost))
	s, err := policy.NewSet([]*policy.Policy{a, users, roomy, e})
	if err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		user, cost string
		first      *policy.Policy
		others     []*policy.Policy
		text       string
	}{
		{"", "20", a, []*policy.Policy{e}, `policy: "a": cost 20 exceeds the capacity 10; "e": cost 20 exceeds the capacity 5`},
		{"ann", "20", a, []*policy.Policy{users, e}, `policy: "a": cost 20 exceeds the capacity 10; "users": cost 20 exceeds the capacity 3; "e": cost 20 exceeds the capacity 5`},
		{"ann", "4", users, nil, `policy: "users": cost 4 exceeds the capacity 3`},
		{"", "0", a, []*policy.Policy{roomy, e}, `policy: "a": cost 0 is below 1; "roomy": cost 0 is below 1; "e": cost 0 is below 1`},
	} {
		r := httptest.NewRequest("POST", "/upload", nil)
		r.Header.Set("X-Cost", tc.cost)
		if tc.user != "" {
			r.Header.Set("X-User", tc.user)
		}
		calls = 0
		var res policy.Result
		err := s.Prepare(r, s.Match(r), &res)
		var ce *policy.CostError
		if !errors.As(err, &ce) || !errors.Is(err, policy.ErrCost) {
			t.Fatalf("user %q cost %s: Prepare = %v, want a *CostError", tc.user, tc.cost, err)
		}
		if ce.Policy != tc.first || ce.Error() != tc.text {
			t.Errorf("user %q cost %s: CostError of %q, text\n%s\nwant %q,\n%s", tc.user, tc.cost, ce.Policy.Name(), ce.Error(), tc.first.Name(), tc.text)
		}
		var others []*policy.Policy
		for _, o := range ce.Others {
			if strconv.FormatInt(o.Cost, 10) != tc.cost {
				t.Errorf("user %q cost %s: Others has %q at cost %d", tc.user, tc.cost, o.Policy.Name(), o.Cost)
			}
			others = append(others, o.Policy)
		}
		if !slices.Equal(others, tc.others) {
			t.Errorf("user %q cost %s: Others %v, want %v", tc.user, tc.cost, names(others), names(tc.others))
		}
		var all []*policy.Policy
		for p, c := range ce.All() {
			if strconv.FormatInt(c, 10) != tc.cost {
				t.Errorf("user %q cost %s: All yields %q at cost %d", tc.user, tc.cost, p.Name(), c)
			}
			all = append(all, p)
		}
		if want := append([]*policy.Policy{tc.first}, tc.others...); !slices.Equal(all, want) {
			t.Errorf("user %q cost %s: All %v, want %v", tc.user, tc.cost, names(all), names(want))
		}
		if res.Len() != 0 || res.Mask() != 0 {
			t.Errorf("user %q cost %s: Result holds %d policies (mask %b) after a CostError, want none", tc.user, tc.cost, res.Len(), res.Mask())
		}
		if calls != 1 {
			t.Errorf("user %q cost %s: the shared key function was called %d times, want 1", tc.user, tc.cost, calls)
		}
	}
}

// names returns the names of ps.
func names(ps []*policy.Policy) []string {
	var s []string
	for _, p := range ps {
		s = append(s, p.Name())
	}
	return s
}

// TestCostErrorAllStops: the iterator of CostError.All stops when its
// loop breaks, and a CostError made without Others (as callers make one)
// yields its Policy alone and reads as before.
func TestCostErrorAllStops(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Minute}
	key := keyfunc.Func(func(r *http.Request) (string, error) { return r.RemoteAddr, nil })
	a := policy.Must(policy.New("a", spec, key))
	b := policy.Must(policy.New("b", spec, key))
	c := policy.Must(policy.New("c", spec, key))
	e := &policy.CostError{Policy: a, Cost: 9, Others: []policy.PolicyCost{{Policy: b, Cost: 9}, {Policy: c, Cost: 9}}}
	for stop := 1; stop <= 3; stop++ {
		n := 0
		for range e.All() {
			if n++; n == stop {
				break
			}
		}
		if n != stop {
			t.Errorf("breaking after %d: %d yielded", stop, n)
		}
	}
	lone := &policy.CostError{Policy: a, Cost: 9}
	n := 0
	for p, cost := range lone.All() {
		if n++; p != a || cost != 9 {
			t.Errorf("lone CostError yields %q at %d", p.Name(), cost)
		}
	}
	if n != 1 || lone.Error() != `policy: "a": cost 9 exceeds the capacity 5` {
		t.Errorf("lone CostError: %d yielded, text %q", n, lone.Error())
	}
}
