package otelmetrics_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestClosedMiddlewareLeavesLimitGauges: one Observer given itself to a
// discarded middleware and to the one replacing it, with the same policy p.
// Once the old one is closed, a limit it is still set (an adaptive
// Controller fed by its last requests), or its policies replaced, does
// not reach ratekeeper.effective_limit and configured_limit, which report
// the new middleware's p.
func TestClosedMiddlewareLeavesLimitGauges(t *testing.T) {
	obs, reader := newObserver(t)
	mem := memStore(t)
	build := func() *middleware.Middleware {
		return middleware.MustNew(mem, []*policy.Policy{fixed("p", 100, user)}, middleware.WithObserver(obs))
	}
	old := build()
	m := build()
	old.Close()
	if err := old.SetLimit("p", 40); err != nil {
		t.Fatal(err)
	}
	if err := old.SetPolicies([]*policy.Policy{fixed("q", 5, user)}); err != nil {
		t.Fatal(err)
	}
	points, _ := collect(t, reader)
	for _, g := range []string{"ratekeeper.effective_limit{policy=p}", "ratekeeper.configured_limit{policy=p}"} {
		if got := points[g]; got != 100 {
			t.Errorf("%s = %d, want the new middleware's 100 (all points: %v)", g, got, points)
		}
	}
	if got, ok := points["ratekeeper.effective_limit{policy=q}"]; ok {
		t.Errorf("the closed middleware's policy q has an effective_limit, %d", got)
	}
	if got := m.Set().Policies()[0].Spec().Limit; got != 100 {
		t.Fatalf("new middleware's limit %d", got)
	}
}
