package metricset_test

import (
	"fmt"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/middleware/internal/metricset"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCountRefusedAllocatesNothing: counting a request refused before its
// store call, for a missing key or a cost out of range, allocates nothing
// once its policies are cached, as Count's doc (and prommetrics' and
// otelmetrics', "recording a request does not allocate") says: a flood of
// requests without the key a policy needs (an unauthenticated client, a
// scanner) is recorded at the cost of an admitted one. Finding the
// *policy.KeyError or *policy.CostError with errors.As cost two
// allocations per request (its targets escaped).
func TestCountRefusedAllocatesNothing(t *testing.T) {
	tight, loose := fixed("tight", 1), fixed("loose", 10)
	cost := &policy.CostError{Policy: tight, Cost: 99, Others: []policy.PolicyCost{{Policy: loose, Cost: 99}}}
	for _, tc := range []struct {
		name string
		e    middleware.Event
	}{
		{"no key", middleware.Event{Result: failedResult(&policy.KeyError{Policy: tight, Err: keyfunc.ErrNoUser}), Outcome: middleware.KeyRejected}},
		{"no key, shadowed", middleware.Event{Result: failedResult(&policy.KeyError{Policy: loose, Err: keyfunc.ErrNoUser}), Outcome: middleware.ShadowDenied}},
		{"cost out of range", middleware.Event{Result: failedResult(fmt.Errorf("wrapped: %w", cost)), Outcome: middleware.Denied}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := newTallies()
			var seen int
			add := func(c *tally, s metricset.Series) {
				c.n[s]++
				seen++
			}
			ps.Count(tc.e, add) // caches the policies
			if n := testing.AllocsPerRun(100, func() { ps.Count(tc.e, add) }); n != 0 {
				t.Errorf("Count: %v allocations, want 0", n)
			}
			if seen < 101 {
				t.Errorf("add called %d times, want at least 101", seen)
			}
		})
	}
}
