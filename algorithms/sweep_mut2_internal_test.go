package algorithms

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// TestSweepShrinksKeyTables: a sweep that leaves a key table less than a
// quarter full rebuilds it smaller (about 70% full), so that memory follows
// the keys held: after 15 of 16 keys went idle and were swept, no table
// larger than the minimum is under a quarter full.
func TestSweepShrinksKeyTables(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s, err := NewMemoryStore(WithClock(ClockFunc(func() time.Time { return now })))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	spec := Spec{Algorithm: FixedWindow, Limit: 10, Window: time.Second}
	take := func(i int) {
		if _, err := s.Take(context.Background(), Check{Spec: spec, Key: "k" + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	const keys = 32_000
	for i := range keys {
		take(i)
	}
	now = now.Add(2 * time.Second) // every key idle
	for i := 0; i < keys; i += 16 {
		take(i) // busy again
	}
	if n := s.Sweep(); n != keys-keys/16 {
		t.Fatalf("Sweep dropped %d keys, want %d", n, keys-keys/16)
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		for _, tb := range sh.tables {
			if kt := tb.cells; kt != nil && kt.cap > minTableCap && uint64(kt.n) < kt.cap/4 {
				t.Errorf("shard %d: %d keys in capacity %d after the sweep, under a quarter full", i, kt.n, kt.cap)
			}
		}
		sh.mu.Unlock()
	}
}
