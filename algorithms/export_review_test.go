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
	_, held := tb.slots().find(h)
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

// LogShape returns how many events s holds for the key of c under c's
// Spec, a sliding_log one, and whether they are spilled (in a log of
// their own) rather than in line in the key's cell; held is false when s
// does not hold the key.
func LogShape(s *MemoryStore, c Check) (events int, spilled, held bool) {
	h := s.hash(c.Key)
	sh := &s.shards[h&s.mask]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	tb := sh.lookupList(&c.Spec)
	if tb == nil || tb.logs == nil {
		return 0, false, false
	}
	i, held := tb.logs.kt.find(h)
	if !held {
		return 0, false, false
	}
	if cl := tb.logs.kt.cs[i]; cl.y != 0 {
		return tb.logs.logs[cl.y-1].n, true, true
	}
	return int(min(tb.logs.kt.cs[i].x, 1)), false, true
}
