package middleware_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestSetLimitRefusals: a negative limit, or one the policy's Spec does
// not allow, is refused with an error naming the call, the policy and the
// rule, and the limit in force stays.
func TestSetLimitRefusals(t *testing.T) {
	store, _ := newStore(t)
	m := middleware.MustNew(store, []*policy.Policy{fixed("p", 10, time.Second, remote)})
	for _, tc := range []struct {
		limit int64
		want  string
	}{
		{-1, `middleware: SetLimit("p", -1): the limit is negative`},
		{1_000_000_001, `middleware: SetLimit("p", 1000000001): policy: "p": Spec.Limit must be at most 1000000000, got 1000000001`},
	} {
		if err := m.SetLimit("p", tc.limit); err == nil || err.Error() != tc.want {
			t.Errorf("SetLimit(%d) = %v, want %q", tc.limit, err, tc.want)
		}
		if got := m.Set().Policy(0).Spec().Limit; got != 10 {
			t.Errorf("after SetLimit(%d): limit %d in force, want 10", tc.limit, got)
		}
	}
}
