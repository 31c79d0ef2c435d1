package algorithms

import (
	"context"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestResetForgetKeepsTheKeyTable: forget removes a key from a table whose
// hashes crowd into few homes (long runs of collisions), as a sweep does:
// the entries after it shift back, in order, with no tombstone, and every
// other key is still found with its state.
func TestResetForgetKeepsTheKeyTable(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, keyBits := range []uint{64, 9} {
		tb := &table{cells: newKeyTable()}
		want := map[uint64]cell{}
		for len(want) < 3000 {
			h := max(r.Uint64()>>(64-keyBits)<<(64-keyBits)|uint64(r.IntN(1<<12)), 1)
			if _, ok := want[h]; ok {
				continue
			}
			c := cell{t: int64(len(want)), x: uint32(h)}
			tb.cells.put(h, c)
			want[h] = c
		}
		checkKeyTable(t, tb.cells, want)
		i := 0
		for h := range want {
			if i++; i%3 == 0 {
				continue
			}
			if !tb.forget(h) {
				t.Fatalf("forget(%#x): not held", h)
			}
			delete(want, h)
			if tb.forget(h) {
				t.Fatalf("forget(%#x) twice: held again", h)
			}
			if i%97 == 0 {
				checkKeyTable(t, tb.cells, want)
			}
		}
		checkKeyTable(t, tb.cells, want)
	}
}

// TestResetInACrowdedStore: thousands of keys of one shard under one Spec
// of each kind, each having taken one unit; every other key is reset, one
// by one. The reset keys are fresh, the others kept their unit, the
// shard's key count, Len and the tables' order agree after every few
// resets, and a Spec left without keys has its table dropped.
func TestResetInACrowdedStore(t *testing.T) {
	ctx := context.Background()
	s, _ := newReviewStore(t)
	keys := keysInShard(s, 3, 3000)
	for _, spec := range reviewSpecs {
		for _, k := range keys {
			if d, err := s.TakeOne(ctx, Check{Spec: spec, Key: k}); err != nil || !d.Allowed {
				t.Fatalf("%s %s: %+v, %v", spec, k, d, err)
			}
		}
	}
	total := len(reviewSpecs) * len(keys)
	if n := s.Len(); n != total {
		t.Fatalf("Len() = %d, want %d", n, total)
	}
	for i, k := range keys {
		if i%2 == 1 {
			continue
		}
		for _, spec := range reviewSpecs {
			if err := s.Reset(ctx, Check{Spec: spec, Key: k}); err != nil {
				t.Fatal(err)
			}
		}
		total -= len(reviewSpecs)
		if i%200 == 0 {
			if n, held := s.Len(), heldKeys(t, s); n != total || held != total {
				t.Fatalf("after resetting %d keys: Len() = %d, tables hold %d, want %d", i/2+1, n, held, total)
			}
			tablesHeld(t, s)
		}
	}
	for _, spec := range reviewSpecs {
		for i, k := range keys {
			want := spec.Capacity() - 2 // kept its unit
			if i%2 == 0 {
				want = spec.Capacity() - 1 // reset
			}
			d, err := s.TakeOne(ctx, Check{Spec: spec, Key: k})
			if err != nil || d.Remaining != want {
				t.Fatalf("%s %s (reset %v): %+v, %v; want Remaining %d", spec, k, i%2 == 0, d, err, want)
			}
		}
	}
	// The last keys of a Spec reset: its tables go at the next compaction,
	// which the shard's next new Spec runs (no Sweep: the reset itself
	// marks the compaction due), and at a Sweep.
	lone := Spec{Algorithm: SlidingBuckets, Limit: 9, Window: time.Hour, Buckets: 3}
	before := tablesHeld(t, s)
	if _, err := s.TakeOne(ctx, Check{Spec: lone, Key: keys[0]}); err != nil {
		t.Fatal(err)
	}
	if n := tablesHeld(t, s); n != before+1 {
		t.Fatalf("%d tables, want %d", n, before+1)
	}
	if err := s.Reset(ctx, Check{Spec: lone, Key: keys[0]}); err != nil {
		t.Fatal(err)
	}
	next := Spec{Algorithm: FixedWindow, Limit: 9, Window: time.Hour}
	if _, err := s.TakeOne(ctx, Check{Spec: next, Key: keys[1]}); err != nil {
		t.Fatal(err)
	}
	if n := tablesHeld(t, s); n != before+1 {
		t.Errorf("after the reset of its only key and a new Spec in its shard, %d tables, want %d: the empty table stayed", n, before+1)
	}
	if err := s.Reset(ctx, Check{Spec: next, Key: keys[1]}); err != nil {
		t.Fatal(err)
	}
	s.Sweep()
	if n := tablesHeld(t, s); n != before {
		t.Errorf("after the reset of its only key and a sweep, %d tables, want %d: the empty table stayed", n, before)
	}
}

// TestResetFreesRoomUnderMaxKeys: a reset key no longer counts towards
// WithMaxKeys, so new keys take its place without evicting a key being
// limited.
func TestResetFreesRoomUnderMaxKeys(t *testing.T) {
	ctx := context.Background()
	s, _ := newReviewStore(t, WithMaxKeys(256)) // one shard of 256 keys
	spec := Spec{Algorithm: FixedWindow, Limit: 2, Window: time.Hour}
	key := func(p string, i int) Check { return Check{Spec: spec, Key: p + strconv.Itoa(i)} }
	for i := range 256 {
		for range 2 {
			if _, err := s.TakeOne(ctx, key("old", i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 16 {
		if err := s.Reset(ctx, key("old", i)); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.Len(); n != 240 {
		t.Fatalf("Len() = %d after resetting 16 of 256 keys, want 240", n)
	}
	for i := range 16 {
		if _, err := s.TakeOne(ctx, key("new", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 16; i < 256; i++ {
		if d, _ := s.TakeOne(ctx, key("old", i)); d.Allowed {
			t.Fatalf("old%d, exhausted, admitted after new keys took the reset keys' room: it was evicted", i)
		}
	}
	if n, held := s.Len(), heldKeys(t, s); n != 256 || held != 256 {
		t.Errorf("Len() = %d, tables hold %d, want 256", n, held)
	}
}

// TestResetConcurrent: goroutines take one key (alone, through TakeOne,
// and beside another key, through a Take of two checks) at a frozen
// instant while another resets it, and another sweeps, under every kind.
// Nothing panics (run with -race), the shards' counts match their tables,
// resets let more than the limit through in all, and between two resets
// no more than the limit is admitted: a Take that began after one reset
// had returned and ended before the next began is counted in that interval,
// and those never exceed the limit (Takes that straddle a reset may fall on
// either side, and only add to some interval's true count).
func TestResetConcurrent(t *testing.T) {
	ctx := context.Background()
	for _, spec := range reviewSpecs {
		t.Run(string(spec.Algorithm), func(t *testing.T) {
			s, _ := newReviewStore(t)
			k := Check{Spec: spec, Key: "hot"}
			side := Check{Spec: Spec{Algorithm: FixedWindow, Limit: MaxLimit, Window: time.Hour}, Key: "side"}
			const resets = 50
			var (
				started, done atomic.Int64 // resets begun, and returned
				mu            sync.Mutex
				within        = map[int64]int64{} // interval -> units admitted inside it
				admitted      atomic.Int64
				stop          atomic.Bool
				wg            sync.WaitGroup
			)
			defer stop.Store(true) // a failure below must not leave the takers running
			for g := range 8 {
				wg.Go(func() {
					for i := 0; !stop.Load(); i++ {
						before := done.Load()
						var ok bool
						if (g+i)%2 == 0 {
							d, err := s.TakeOne(ctx, k)
							if err != nil {
								t.Error(err)
								return
							}
							ok = d.Allowed
						} else {
							ds, err := s.Take(ctx, k, side)
							if err != nil {
								t.Error(err)
								return
							}
							ok = ds[0].Allowed && ds[1].Allowed
						}
						if !ok {
							continue
						}
						admitted.Add(1)
						if started.Load() == before {
							mu.Lock()
							within[before]++
							mu.Unlock()
						}
					}
				})
			}
			wg.Go(func() {
				for !stop.Load() {
					s.Sweep()
					runtime.Gosched()
				}
			})
			for range resets {
				mark := admitted.Load()
				started.Add(1)
				if err := s.Reset(ctx, k); err != nil {
					t.Error(err)
				}
				done.Add(1)
				// Let the takers exhaust the allowance the reset gave back:
				// every unit of it is admitted, and counted, after mark.
				giveUp := time.Now().Add(time.Minute)
				for admitted.Load() < mark+spec.Capacity() {
					if time.Now().After(giveUp) {
						t.Fatalf("the takers were not admitted the %d units of a reset key within a minute (%d admitted)", spec.Capacity(), admitted.Load()-mark)
					}
					runtime.Gosched()
				}
			}
			stop.Store(true)
			wg.Wait()
			for iv, n := range within {
				if n > spec.Capacity() {
					t.Errorf("%d units admitted between reset %d and the next, above the limit %d", n, iv, spec.Capacity())
				}
			}
			if n := admitted.Load(); n < resets*spec.Capacity() {
				t.Errorf("%d units admitted in all through %d resets of a key of capacity %d: a reset did not restore the allowance", n, resets, spec.Capacity())
			}
			tablesHeld(t, s)
			if n, held := s.Len(), heldKeys(t, s); n != held {
				t.Errorf("Len() = %d, tables hold %d", n, held)
			}
		})
	}
}
