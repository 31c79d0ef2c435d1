package algorithms

import (
	"math"
	"testing"
)

// TestWithMaxKeysSpreadsTheBound pins how WithMaxKeys spreads its bound over
// the shards, as its doc says: 0 is accepted and means no bound; all 64
// shards from 64·256 keys; below that, the shard count halves until each
// shard holds at least 256 keys (or one shard is left); and each shard's
// share is the bound divided by the shards, rounded up.
func TestWithMaxKeysSpreadsTheBound(t *testing.T) {
	for _, tc := range []struct {
		bound, shards, perShard int
	}{
		{0, 64, 0}, // no bound
		{1, 1, 1},
		{256, 1, 256},
		{511, 1, 511},
		{512, 2, 256},
		{513, 2, 257},
		{64*256 - 1, 32, 512}, // 511.97 per shard, rounded up
		{64 * 256, 64, 256},
		{64*256 + 1, 64, 257},
		{1_000_000, 64, 15_625},
		{math.MaxInt, 64, math.MaxInt/64 + 1}, // rounded up without overflow: still a bound
	} {
		s, err := NewMemoryStore(WithMaxKeys(tc.bound))
		if err != nil {
			t.Errorf("WithMaxKeys(%d): %v", tc.bound, err)
			continue
		}
		if got := int(s.mask) + 1; got != tc.shards {
			t.Errorf("WithMaxKeys(%d) uses %d shards, want %d", tc.bound, got, tc.shards)
		}
		if s.perShrd != tc.perShard {
			t.Errorf("WithMaxKeys(%d) bounds each shard to %d keys, want %d", tc.bound, s.perShrd, tc.perShard)
		}
	}
}
