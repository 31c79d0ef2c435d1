package algorithms

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestRingTableChurn inserts, changes and removes keys of a ringTable at
// random, and after every step checks that each key held loads the ring
// a map of the same keys holds, and that the rings stay dense, one per key.
func TestRingTableChurn(t *testing.T) {
	p := newParams(Spec{Algorithm: SlidingBuckets, Limit: 1000, Window: time.Minute, Buckets: 6})
	rt := newRingTable(p.buckets)
	type ring struct {
		last, sum int64
		counts    []uint32
	}
	want := map[uint64]*ring{}
	rng := rand.New(rand.NewPCG(1, 2))
	hashes := make([]uint64, 300)
	for i := range hashes {
		hashes[i] = rng.Uint64() | 1
	}
	for step := range 20_000 {
		h := hashes[rng.IntN(len(hashes))]
		i, held := rt.kt.find(h)
		if (want[h] != nil) != held {
			t.Fatalf("step %d: key %#x held %v, want %v", step, h, held, want[h] != nil)
		}
		switch {
		case !held:
			j := rng.Int64N(1000)
			rt.insert(h, j)
			want[h] = &ring{last: j, counts: make([]uint32, p.buckets)}
		case rng.IntN(3) == 0:
			rt.removeAt(i)
			delete(want, h)
			if rng.IntN(10) == 0 {
				rt.shrink()
			}
		default:
			// Count a unit a few sub-windows on, as a Take would.
			bk := rt.load(i)
			bk.roll(&p, (bk.last+rng.Int64N(3))*p.sub)
			bk.commit(&p, 1)
			rt.store(i, &bk)
			w := want[h]
			for range bk.last - w.last {
				w.last++
				w.sum -= int64(w.counts[mod(w.last, p.buckets)])
				w.counts[mod(w.last, p.buckets)] = 0
			}
			w.counts[mod(w.last, p.buckets)]++
			w.sum++
		}
		if len(rt.rows) != len(want)*rt.b || len(rt.owners) != len(want) || rt.len() != len(want) {
			t.Fatalf("step %d: %d keys, %d words of rings, want %d keys", step, rt.len(), len(rt.rows), len(want))
		}
		for k, w := range want {
			i, ok := rt.kt.find(k)
			if !ok {
				t.Fatalf("step %d: key %#x lost", step, k)
			}
			bk := rt.load(i)
			if bk.last != w.last || bk.sum != w.sum || bk.at != mod(w.last, p.buckets) || !slices.Equal(bk.counts, w.counts) {
				t.Fatalf("step %d: key %#x loads last %d sum %d at %d counts %v, want last %d sum %d counts %v",
					step, k, bk.last, bk.sum, bk.at, bk.counts, w.last, w.sum, w.counts)
			}
		}
	}
}

// TestFreshRingSharedCountsUntouched runs Takes and Peeks of new
// sliding_buckets keys, several checks on one key in one Take among them,
// and checks that the counts every fresh ring shares stay 0.
func TestFreshRingSharedCountsUntouched(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	s, err := NewMemoryStore(WithClock(ClockFunc(func() time.Time { return now })))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	spec := Spec{Algorithm: SlidingBuckets, Limit: 5, Window: time.Second, Buckets: 4}
	for i := range 50 {
		key := string(rune('a' + i%26))
		c := Check{Spec: spec, Key: key + "x", Cost: 2}
		if _, err := s.Take(t.Context(), c, c); err != nil {
			t.Fatal(err)
		}
		if _, err := s.TakeOne(t.Context(), Check{Spec: spec, Key: key}); err != nil {
			t.Fatal(err)
		}
		now = now.Add(170 * time.Millisecond)
	}
	for i, x := range zeroRing {
		if x != 0 {
			t.Fatalf("the fresh rings' shared counts hold %d at %d", x, i)
		}
	}
}
