package algorithms

import "testing"

// HoldsKey reports whether s holds the key of c under c's Spec, so that an
// external test following s with a Model can forget in the Model the keys
// s evicted or swept.
func HoldsKey(s *MemoryStore, c Check) bool {
	h := s.hash(c.Key)
	sh := &s.shards[h&s.mask]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	tb := sh.lookupList(&c.Spec)
	if tb == nil {
		return false
	}
	switch {
	case tb.cells != nil:
		_, held := tb.cells.find(h)
		return held
	case tb.logs != nil:
		_, held := tb.logs[h]
		return held
	}
	_, held := tb.rings.kt.find(h)
	return held
}

// CheckHeld checks the tables of s as heldKeys does (the rings dense, one
// per key, each owned by its key and summing to its cell's sum) and
// returns the number of keys held.
func CheckHeld(t *testing.T, s *MemoryStore) int {
	t.Helper()
	return heldKeys(t, s)
}

// KeysInShard returns n distinct keys that s puts in its shard i.
func KeysInShard(s *MemoryStore, i uint64, n int) []string { return keysInShard(s, i, n) }
