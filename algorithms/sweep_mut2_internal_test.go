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

// TestFreshKeyAfterSweepCountsFromItsDecision: after a sweep at 1 ns
// before a window's end and a clock gone back half a second, a new key is
// decided at the sweep's instant (its shard forgot keys then), and its
// times are counted from now: a reset 1 ns after that instant is half a
// second from now.
func TestFreshKeyAfterSweepCountsFromItsDecision(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	now := t0
	s, err := NewMemoryStore(WithClock(ClockFunc(func() time.Time { return now })))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	spec := Spec{Algorithm: FixedWindow, Limit: 10, Window: time.Second}
	for i := range 10_000 { // keys in every shard
		if _, err := s.Take(context.Background(), Check{Spec: spec, Key: "k" + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	now = t0.Add(2*time.Second - time.Nanosecond)
	if n := s.Sweep(); n != 10_000 {
		t.Fatalf("Sweep dropped %d keys, want 10000", n)
	}
	now = t0.Add(1500 * time.Millisecond)
	ds, err := s.Take(context.Background(), Check{Spec: spec, Key: "new"})
	if err != nil {
		t.Fatal(err)
	}
	if d := ds[0]; !d.Allowed || d.Remaining != 9 || d.ResetAfter != 500*time.Millisecond {
		t.Errorf("new key after the sweep and the clock's step back: %+v, want allowed, Remaining 9, ResetAfter 500ms", d)
	}
}
