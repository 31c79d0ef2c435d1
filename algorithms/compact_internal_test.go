package algorithms

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"
)

// tablesHeld returns how many tables the store's shards hold, and checks
// that each shard's published view (list, index, latest) matches its
// tables and that its key count is its tables' keys.
func tablesHeld(t *testing.T, s *MemoryStore) int {
	t.Helper()
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		keys := 0
		for _, tb := range sh.tables {
			if tb.dead {
				t.Errorf("shard %d holds a dropped table", i)
			}
			keys += tb.len()
		}
		if keys != sh.keys {
			t.Errorf("shard %d counts %d keys, its tables hold %d (a key went into a dropped table?)", i, sh.keys, keys)
		}
		if list := sh.list.Load(); list != nil && len(*list) != len(sh.tables) {
			t.Errorf("shard %d publishes %d tables, holds %d", i, len(*list), len(sh.tables))
		}
		if last := sh.last.Load(); last != nil && last.dead {
			t.Errorf("shard %d's latest table was dropped", i)
		}
		n += len(sh.tables)
		sh.mu.Unlock()
	}
	return n
}

// TestCompactDropsEmptyTables: a store kept a table per Spec in each shard
// for ever, about 30 kB per Spec, so a process whose limits changed over
// its life (SetLimit, adaptive limits, reloads) grew without bound. Tables
// left without keys are now dropped: by Sweep, and without it once the
// shard's own sweep has emptied them, when a new Spec comes.
func TestCompactDropsEmptyTables(t *testing.T) {
	ctx := context.Background()
	s, clk := newReviewStore(t)
	spec := func(i int) Spec {
		return Spec{Algorithm: []Kind{FixedWindow, SlidingLog, SlidingBuckets, TokenBucket}[i%4], Limit: int64(100 + i), Window: time.Minute, Buckets: map[bool]int{true: 6}[i%4 == 2]}
	}
	for i := range 12 {
		for k := range 200 {
			if _, err := s.TakeOne(ctx, Check{Spec: spec(i), Key: "k" + strconv.Itoa(k)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := tablesHeld(t, s); n < 10*len(s.shards) || n > 12*len(s.shards) {
		t.Fatalf("%d tables, want about %d (12 Specs in nearly every shard)", n, 12*len(s.shards))
	}
	clk.Advance(time.Hour) // every key idle
	s.Sweep()
	if n := tablesHeld(t, s); n != 0 {
		t.Fatalf("after Sweep of idle keys, %d tables, want 0", n)
	}
	d, err := s.TakeOne(ctx, Check{Spec: spec(0), Key: "k0"})
	if err != nil || !d.Allowed || d.Remaining != spec(0).Limit-1 {
		t.Fatalf("a Spec whose table was dropped: %+v, %v; want a fresh key", d, err)
	}

	// Without Sweep: the shards' own sweeps (at 512 keys) empty the old
	// tables, and a new Spec's first check drops them.
	for i := range 12 {
		for k := range 100 {
			if _, err := s.TakeOne(ctx, Check{Spec: spec(i), Key: "k" + strconv.Itoa(k)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	clk.Advance(time.Hour)
	fresh := Spec{Algorithm: FixedWindow, Limit: 1000, Window: time.Hour}
	for k := range 64 * 600 {
		if _, err := s.Take(ctx, Check{Spec: fresh, Key: "n" + strconv.Itoa(k)}, Check{Spec: spec(0), Key: "n" + strconv.Itoa(k)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := tablesHeld(t, s); n > 2*len(s.shards) {
		t.Errorf("%d tables after the old Specs' keys went idle, want at most %d (two live Specs)", n, 2*len(s.shards))
	}
}

// TestCompactConcurrentChecks: checks that found a table without the lock
// while a compaction dropped it must not put a key into the dropped table
// (a key lost at once, and counted by the shard for ever): single checks,
// Takes of several, give-backs and refunds race with Sweeps that empty and
// drop the tables; the shards' key counts must match their tables' keys.
func TestCompactConcurrentChecks(t *testing.T) {
	ctx := context.Background()
	s, clk := newReviewStore(t)
	specs := []Spec{
		{Algorithm: FixedWindow, Limit: 5, Window: time.Millisecond},
		{Algorithm: SlidingWindow, Limit: 5, Window: time.Millisecond},
		{Algorithm: SlidingLog, Limit: 5, Window: time.Millisecond},
		{Algorithm: LeakyQueue, Limit: 5, Window: time.Millisecond, MaxDelay: time.Millisecond},
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := strconv.Itoa(g) + "-" + strconv.Itoa(i%50)
				c := Check{Spec: specs[(g+i)%len(specs)], Key: key}
				switch i % 3 {
				case 0:
					d, err := s.TakeOne(ctx, c)
					if err == nil && d.Allowed {
						var dst [1]Refunded
						_ = s.Refund(ctx, dst[:], []Check{c}, []Decision{d}, 0)
					}
				case 1:
					_, _ = s.Take(ctx, c, Check{Spec: specs[(g+i+1)%len(specs)], Key: key})
				default:
					d, err := s.TakeOne(ctx, c)
					if err == nil && d.Allowed {
						var dst [1]Refunded
						_ = s.GiveBack(ctx, dst[:], []Check{c}, []Decision{d}, 0)
					}
				}
			}
		})
	}
	for range 300 {
		clk.Advance(time.Second)
		s.Sweep()
	}
	close(stop)
	wg.Wait()
	tablesHeld(t, s)
}

// TestLiveAfterCompaction: a table a call found without the lock and a
// compaction dropped is looked up again under the lock: live makes the
// Spec's table anew, liveOrNil reports none until one is made, and then
// that one.
func TestLiveAfterCompaction(t *testing.T) {
	for _, specs := range []int{1, scanTables + 2} { // a scanned shard, an indexed one
		s, _ := newReviewStore(t)
		sh := &s.shards[0]
		sh.mu.Lock()
		var tbs []*table
		for i := range specs {
			tb, err := sh.table(&Spec{Algorithm: FixedWindow, Limit: int64(10 + i), Window: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			tbs = append(tbs, tb)
		}
		old := tbs[0]
		sh.compact() // every table is empty
		if !old.dead || len(sh.tables) != 0 || sh.last.Load() != nil {
			t.Fatalf("%d Specs: compaction left %d tables (dead %v)", specs, len(sh.tables), old.dead)
		}
		if got := sh.liveOrNil(old); got != nil {
			t.Errorf("%d Specs: liveOrNil of a dropped table with none made since = %p, want nil", specs, got)
		}
		fresh := sh.live(old)
		if fresh == old || fresh.dead || fresh.spec != old.spec {
			t.Errorf("%d Specs: live made %p (dead %v), want a new live table of the Spec", specs, fresh, fresh.dead)
		}
		for i := 1; i < specs; i++ {
			if _, err := sh.table(&tbs[i].spec); err != nil {
				t.Fatal(err)
			}
		}
		if got := sh.liveOrNil(old); got != fresh {
			t.Errorf("%d Specs: liveOrNil = %p, want the table made since, %p", specs, got, fresh)
		}
		if got := sh.liveOrNil(fresh); got != fresh {
			t.Errorf("%d Specs: liveOrNil of a live table = %p, want it", specs, got)
		}
		sh.mu.Unlock()
	}
}
