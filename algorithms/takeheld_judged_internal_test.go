package algorithms

import (
	"context"
	"testing"
	"time"
)

// TestTakeHeldDecidesJudgedWindowChecks: a Take of several checks on held
// keys of fixed_window and sliding_window, some judged at a limit of their
// own ([Check.Limit], the checks of policies lowered by SetLimit), is
// decided in place by takeHeld, as the same Take unjudged is, not through
// decideMany's steps (about 1.4x the middleware's cost per request with
// four lowered policies on 2026-12-07). Its Decisions are those of the
// steps (TestTakeOneJudgedHeldMatchesTakeSteps compares the two on random
// runs); here each is judged at its own limit.
func TestTakeHeldDecidesJudgedWindowChecks(t *testing.T) {
	ctx := context.Background()
	s, _ := newReviewStore(t)
	fixed := Spec{Algorithm: FixedWindow, Limit: 10, Window: time.Minute}
	sliding := Spec{Algorithm: SlidingWindow, Limit: 10, Window: time.Second}
	checks := []Check{
		{Spec: fixed, Key: "a", Limit: 4},
		{Spec: sliding, Key: "a", Limit: 20},
		{Spec: sliding, Key: "b"},
	}
	dst := make([]Decision, len(checks))
	if err := s.TakeInto(ctx, dst, checks); err != nil { // holds the keys
		t.Fatal(err)
	}
	hs := make([]uint64, len(checks))
	var locked shardSet
	for i := range checks {
		hs[i] = s.hash(checks[i].Key)
		locked.add(hs[i] & s.mask)
	}
	s.lockShards(locked)
	held := s.takeHeld(dst, checks, hs, s.now())
	s.unlockShards(locked)
	if !held {
		t.Fatal("takeHeld left a Take of held window-kind keys, two judged at limits of their own, to decideMany")
	}
	for i, want := range []struct{ limit, remaining int64 }{{4, 2}, {20, 18}, {10, 8}} {
		if d := dst[i]; !d.Allowed || d.Limit != want.limit || d.Remaining != want.remaining {
			t.Errorf("check %d (%+v): %+v, want allowed at limit %d with %d remaining", i, checks[i], d, want.limit, want.remaining)
		}
	}
}
