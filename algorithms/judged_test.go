package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestMemoryStoreJudgedDoesNotAllocate: a check judged at a limit of its
// own (algorithms.Check.Limit) on a held key does not allocate either,
// although it takes the steps of a Take of several checks: through
// TakeOne, TakeInto (admitted, and denied) and Peek, under every window
// kind. (The conformance suite's Judged tests check what it decides.)
func TestMemoryStoreJudgedDoesNotAllocate(t *testing.T) {
	for _, k := range []algorithms.Kind{algorithms.FixedWindow, algorithms.SlidingWindow, algorithms.SlidingLog, algorithms.SlidingBuckets} {
		t.Run(string(k), func(t *testing.T) {
			s, _ := newStore(t) // frozen: a log's events stay at one instant
			spec := algorithms.Spec{Algorithm: k, Limit: algorithms.MaxLimit, Window: time.Second}
			if k == algorithms.SlidingBuckets {
				spec.Buckets = 4
			}
			one := algorithms.Check{Spec: spec, Key: "k", Limit: algorithms.MaxLimit / 2}
			admitted := []algorithms.Check{one, {Spec: spec, Key: "j", Limit: algorithms.MaxLimit / 3}}
			denied := []algorithms.Check{{Spec: spec, Key: "full", Limit: 1}, {Spec: spec, Key: "spare", Limit: 5}}
			take(t, s, admitted...)
			take(t, s, denied...)
			dst := make([]algorithms.Decision, 2)
			for name, f := range map[string]func(){
				"TakeOne":           func() { s.TakeOne(ctx, one) },
				"TakeInto admitted": func() { s.TakeInto(ctx, dst, admitted) },
				"TakeInto denied":   func() { s.TakeInto(ctx, dst, denied) },
				"Peek":              func() { s.Peek(ctx, dst, admitted) },
			} {
				if n := testing.AllocsPerRun(100, f); n != 0 {
					t.Errorf("%s of checks judged at a limit of their own allocates %v times per call, want 0", name, n)
				}
			}
			if err := s.TakeInto(ctx, dst, denied); err != nil || dst[0].Allowed || !dst[1].Allowed || dst[1].Limit != 5 {
				t.Errorf("TakeInto(%v) = %v, %+v; want the first denied, the second passing at 5", denied, err, dst)
			}
		})
	}
}
