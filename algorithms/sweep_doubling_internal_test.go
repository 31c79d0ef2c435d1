package algorithms

import (
	"context"
	"testing"
	"time"
)

// TestShardSweepsWhenItsKeysDouble pins the lazy expiry's schedule: a shard
// sweeps itself when a new key comes while it holds minSweep keys, and after
// a sweep, not again until its key count has doubled from what the sweep
// left. Keys that went idle in between are held (and counted by Len) until
// then, and dropped by that sweep.
func TestShardSweepsWhenItsKeysDouble(t *testing.T) {
	ctx := context.Background()
	spec := Spec{Algorithm: FixedWindow, Limit: 5, Window: time.Second}
	s, clk := newReviewStore(t)
	keys := keysInShard(s, 0, 3*minSweep)
	next := 0
	add := func(n int) {
		t.Helper()
		for range n {
			if d, err := s.TakeOne(ctx, Check{Spec: spec, Key: keys[next]}); err != nil || !d.Allowed {
				t.Fatalf("new key %d: %+v, %v", next, d, err)
			}
			next++
		}
	}
	// minSweep+1 keys, all in use: the last one's sweep drops none, and
	// leaves minSweep keys, so the next sweep comes at 2·minSweep.
	add(minSweep + 1)
	clk.Advance(time.Second) // every key so far idle
	add(1)
	if got, want := s.Len(), minSweep+2; got != want {
		t.Fatalf("Len = %d after a new key at %d keys, want %d: the shard swept before its keys doubled", got, minSweep+1, want)
	}
	add(2*minSweep - s.Len())
	if got, want := s.Len(), 2*minSweep; got != want {
		t.Fatalf("Len = %d, want %d: the shard swept before its keys doubled", got, want)
	}
	add(1) // at 2·minSweep keys: the sweep drops the minSweep+1 idle ones
	if got, want := s.Len(), 2*minSweep-(minSweep+1)+1; got != want {
		t.Errorf("Len = %d after a new key at %d keys, want %d: the shard did not sweep its idle keys when its keys doubled", got, 2*minSweep, want)
	}
}
