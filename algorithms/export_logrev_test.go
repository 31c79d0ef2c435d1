package algorithms

// SweepDue makes every shard of s sweep itself at its next new key (rather
// than once it has doubled since its last sweep, at 512 keys at least), so
// that a test's Takes sweep, fold and drop keys between the commits of one
// Take.
func SweepDue(s *MemoryStore) {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.sweepAt = 0
		sh.mu.Unlock()
	}
}
