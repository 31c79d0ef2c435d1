package algorithms

import (
	"testing"
	"time"
)

// TestRefundOneAfterCompaction: a Refund that found its queue's table
// without the lock, and a compaction dropped it (and made none of its Spec)
// before the Refund got the lock, gives nothing back, says so, and
// releases the shard's lock. The interleaving is set up by putting the
// dropped table back as the shard's latest, as a lookup made before the
// compaction saw it. Kills memory.go:1145 (the Unlock cut: the shard stays
// locked) and :1146 (return true: a place reported given that no table
// holds); the same for the Refund's look at the queue, which reports a
// fresh queue (kills :1172, the stand-in empty table cut: a nil table
// read).
func TestRefundAfterCompaction(t *testing.T) {
	s, clk := newReviewStore(t)
	c := Check{Spec: Spec{Algorithm: LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 5 * time.Second}, Key: "q"}
	sh := &s.shards[s.hash(c.Key)&s.mask]
	sh.mu.Lock()
	tb, err := sh.table(&c.Spec)
	if err != nil {
		t.Fatal(err)
	}
	sh.compact() // the table holds no key: dropped
	if !tb.dead || sh.lookupList(&c.Spec) != nil {
		t.Fatalf("compaction kept the empty table (dead %v)", tb.dead)
	}
	sh.last.Store(tb) // what a lookup before the compaction found
	sh.mu.Unlock()

	if given := s.refundOne(&c, time.Second, 0, clk.Now().UnixNano()); given {
		t.Error("refundOne on a table dropped since its lookup = true, want false (no key of the Spec is held)")
	}
	if !sh.mu.TryLock() {
		t.Fatal("refundOne left the shard locked")
	}
	sh.mu.Unlock()

	d := s.lookQueue(&c, clk.Now().UnixNano())
	if !d.Allowed || d.Remaining != c.Spec.Capacity() || d.Delay != 0 {
		t.Errorf("lookQueue on a table dropped since its lookup = %+v, want a fresh queue's look (admitted, %d left, no delay)", d, c.Spec.Capacity())
	}
	if !sh.mu.TryLock() {
		t.Fatal("lookQueue left the shard locked")
	}
	sh.mu.Unlock()
}
