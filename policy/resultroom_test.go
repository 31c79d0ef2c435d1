package policy_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/resultroom"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestResultroomDecisions pins resultroom.Decisions, package middleware's
// view of a Result's decisions in place: none before Take, then the
// decisions Decision returns one by one, in the Result's own room (a
// Result grown past it: 5 policies) and in a room given to it, and none
// again after a Prepare.
func TestResultroomDecisions(t *testing.T) {
	ds := []algorithms.Decision{
		{Allowed: true, Limit: 10, Remaining: 9, ResetAfter: time.Second},
		{Allowed: true, Limit: 10, Remaining: 3, NextAfter: 2 * time.Second},
		{Allowed: false, Limit: 10, RetryAfter: time.Minute},
		{Allowed: true, Limit: 10, Remaining: 7, Delay: time.Millisecond},
		{Allowed: true, Limit: 10, Remaining: 1, ResetAfter: time.Hour},
	}
	for _, tc := range []struct {
		name  string
		n     int
		given bool
	}{
		{"one, own room", 1, false},
		{"four, own room", 4, false},
		{"five, own room", 5, false},
		{"two, given room", 2, true},
		{"four, given room", 4, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := setOf(t, tc.n)
			var res policy.Result
			if tc.given {
				resultroom.Give(&res, new(resultroom.Four))
			}
			r := httptest.NewRequest("GET", "/", nil)
			if err := s.Prepare(r, s.Match(r), &res); err != nil {
				t.Fatal(err)
			}
			if got := resultroom.Decisions(&res); len(got) != 0 {
				t.Fatalf("Decisions before Take = %v, want none", got)
			}
			if err := res.Take(context.Background(), &fixedStore{ds: ds}); err != nil {
				t.Fatal(err)
			}
			got := resultroom.Decisions(&res)
			if len(got) != res.Len() || res.Len() != tc.n {
				t.Fatalf("len(Decisions) = %d, Len() = %d, want %d", len(got), res.Len(), tc.n)
			}
			for i := range got {
				if got[i] != res.Decision(i) || got[i] != ds[i] {
					t.Errorf("Decisions[%d] = %+v, want %+v", i, got[i], res.Decision(i))
				}
			}
			if err := s.Prepare(r, s.Match(r), &res); err != nil {
				t.Fatal(err)
			}
			if got := resultroom.Decisions(&res); len(got) != 0 {
				t.Fatalf("Decisions after a new Prepare = %v, want none", got)
			}
		})
	}
}
