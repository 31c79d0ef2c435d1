package algorithms

import (
	"context"
	"testing"
	"time"
)

// TestTakeOneJudgedHeldCompactsAsTakeSteps: a check judged at a limit of
// its own on a held key, decided in place by TakeOne, leaves its shard as
// the steps of a Take of several checks (takeJudged) leave it: a shard
// whose own sweep has just emptied a table is compacted first, the empty
// table dropped. Left in the shard's list, the table shifts where
// eviction's sample starts (a bounded store then evicts another key than
// the steps would have, and later decisions differ: see
// TestTakeOneJudgedHeldMatchesTakeSteps).
func TestTakeOneJudgedHeldCompactsAsTakeSteps(t *testing.T) {
	ctx := context.Background()
	s, clk := newReviewStore(t)
	a := Spec{Algorithm: FixedWindow, Limit: 10, Window: time.Minute}
	b := Spec{Algorithm: FixedWindow, Limit: 10, Window: time.Second}
	keys := keysInShard(s, 0, 3)
	sh := &s.shards[0]
	judged := Check{Spec: a, Key: keys[0], Limit: 5}
	for _, c := range []Check{judged, {Spec: b, Key: keys[1]}} {
		if _, err := s.TakeOne(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	tbB := sh.lookupList(&b)
	clk.Advance(2 * time.Second) // b's key idle, a's not
	SweepDue(s)
	if _, err := s.TakeOne(ctx, Check{Spec: a, Key: keys[2]}); err != nil {
		t.Fatal(err)
	}
	if !sh.compactDue || !tbB.empty() || tbB.dead {
		t.Fatalf("setup: a new key's sweep left compactDue %v, b's table empty %v, dead %v; want true, true, false", sh.compactDue, tbB.empty(), tbB.dead)
	}
	d, err := s.TakeOne(ctx, judged)
	if err != nil || !d.Allowed || d.Remaining != 3 {
		t.Fatalf("TakeOne(%+v) = %+v, %v; want admitted, 3 remaining", judged, d, err)
	}
	if sh.compactDue || !tbB.dead || len(sh.tables) != 1 {
		t.Errorf("after a judged TakeOne on a held key: compactDue %v, b's empty table dead %v, %d tables in the shard; want false, true, 1 (as takeJudged leaves it)", sh.compactDue, tbB.dead, len(sh.tables))
	}
}
