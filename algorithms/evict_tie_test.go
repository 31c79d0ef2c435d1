package algorithms_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestMemoryStoreEvictionTieKeepsTheKeyHoldingMore guards the WithMaxKeys
// bound against a flood of keys of a Spec of capacity 1: one request puts
// each at a share of 1, the share of a client at its limit under any
// Spec. Eviction must not reset that client (100 of 100 in use) for
// them: of keys using equal shares it evicts the one holding fewer units.
// 8,192 flood keys at a bound of 256 make about 7,900 evictions, each of
// which sampled the client first in about one of 330 (the table's slots):
// before the tie went to the key holding more, the client went in every
// run but with a probability below 10^-10.
func TestMemoryStoreEvictionTieKeepsTheKeyHoldingMore(t *testing.T) {
	victimSpec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Minute}
	for _, flood := range []algorithms.Spec{
		{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Minute}, // MaxDelay 0
		{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Minute},
		{Algorithm: algorithms.SlidingLog, Limit: 1, Window: time.Minute},
		{Algorithm: algorithms.SlidingWindow, Limit: 1, Window: time.Minute},
		{Algorithm: algorithms.SlidingBuckets, Limit: 1, Window: time.Minute, Buckets: 4},
		{Algorithm: algorithms.TokenBucket, Limit: 1, Window: time.Minute},
		{Algorithm: algorithms.LeakyBucket, Limit: 1, Window: time.Minute},
	} {
		t.Run(string(flood.Algorithm), func(t *testing.T) {
			if c := flood.Capacity(); c != 1 {
				t.Fatalf("%v.Capacity() = %d, want 1", flood, c)
			}
			s, _ := newStore(t, algorithms.WithMaxKeys(256))
			victim := algorithms.Check{Spec: victimSpec, Key: "victim", Cost: 100}
			if d := take(t, s, victim)[0]; !d.Allowed || d.Remaining != 0 {
				t.Fatalf("victim's Take = %+v, want allowed with nothing left", d)
			}
			for i := range 8192 {
				if d := take(t, s, algorithms.Check{Spec: flood, Key: "flood" + strconv.Itoa(i)})[0]; !d.Allowed {
					t.Fatalf("flood key %d refused: %+v", i, d)
				}
			}
			var d [1]algorithms.Decision
			if err := s.Peek(ctx, d[:], []algorithms.Check{{Spec: victimSpec, Key: "victim"}}); err != nil {
				t.Fatal(err)
			}
			if d[0].Remaining != 0 {
				t.Errorf("after 8192 keys of %v, each using 1 of 1: victim at 100 of 100 reset, Peek = %+v, want Remaining 0", flood, d[0])
			}
		})
	}
}

// TestMemoryStoreEvictionNearTheLimit: a client short of its limit is not
// reset by a flood of one-request keys of a Spec of capacity 1 (each
// using all of it) either, while it holds u units of a capacity C with u²
// > C (u·u/C, its units times its share, above the flood keys' 1·1/1), or
// u² = C (a tie, which the key holding more units wins); with u² < C it
// is the cheaper to keep and goes. The flood is as in
// TestMemoryStoreEvictionTieKeepsTheKeyHoldingMore.
func TestMemoryStoreEvictionNearTheLimit(t *testing.T) {
	victimSpec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Minute}
	flood := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Minute}
	for _, tc := range []struct {
		used int64
		kept bool
	}{{99, true}, {50, true}, {11, true}, {10, true}, {9, false}, {1, false}} {
		t.Run(strconv.FormatInt(tc.used, 10), func(t *testing.T) {
			s, _ := newStore(t, algorithms.WithMaxKeys(256))
			victim := algorithms.Check{Spec: victimSpec, Key: "victim", Cost: tc.used}
			take(t, s, victim)
			for i := range 8192 {
				if d := take(t, s, algorithms.Check{Spec: flood, Key: "flood" + strconv.Itoa(i)})[0]; !d.Allowed {
					t.Fatalf("flood key %d refused: %+v", i, d)
				}
			}
			var d [1]algorithms.Decision
			if err := s.Peek(ctx, d[:], []algorithms.Check{{Spec: victimSpec, Key: "victim"}}); err != nil {
				t.Fatal(err)
			}
			if kept := d[0].Remaining == victimSpec.Limit-tc.used; kept != tc.kept {
				t.Errorf("victim at %d of 100 after 8192 keys using 1 of 1: kept %v, want %v (Peek = %+v)", tc.used, kept, tc.kept, d[0])
			}
		})
	}
}

// TestMemoryStoreEvictionWeighsUnits: a key's weight, u·u/C, favours the
// client holding more units where the share alone would not: a client
// at its limit of 5 weighs 5, and goes before keys using 71 of 1000
// (5.041) but not before keys using 70 (4.9). Either flood costs more
// units a key than the client holds.
func TestMemoryStoreEvictionWeighsUnits(t *testing.T) {
	victimSpec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Minute}
	flood := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1000, Window: time.Minute}
	for _, tc := range []struct {
		floodCost int64
		kept      bool
	}{{70, true}, {71, false}} {
		t.Run(strconv.FormatInt(tc.floodCost, 10), func(t *testing.T) {
			s, _ := newStore(t, algorithms.WithMaxKeys(256))
			take(t, s, algorithms.Check{Spec: victimSpec, Key: "victim", Cost: 5})
			for i := range 8192 {
				if d := take(t, s, algorithms.Check{Spec: flood, Key: "flood" + strconv.Itoa(i), Cost: tc.floodCost})[0]; !d.Allowed {
					t.Fatalf("flood key %d refused: %+v", i, d)
				}
			}
			var d [1]algorithms.Decision
			if err := s.Peek(ctx, d[:], []algorithms.Check{{Spec: victimSpec, Key: "victim"}}); err != nil {
				t.Fatal(err)
			}
			if kept := d[0].Remaining == 0; kept != tc.kept {
				t.Errorf("victim at 5 of 5 after 8192 keys using %d of 1000: kept %v, want %v (Peek = %+v)", tc.floodCost, kept, tc.kept, d[0])
			}
		})
	}
}

// TestMemoryStoreEvictionKeepsEveryKindNearItsLimit: a client of each kind
// at its limit, or short of it by 1 or by a fifth (80 of 100 weighs 64;
// 71 of a queue's 91 weighs 55), is left exactly as it was by a flood of
// one-request keys of a Spec of capacity 1 (each weighing 1): its state's
// used units, as each kind counts them, weigh it.
func TestMemoryStoreEvictionKeepsEveryKindNearItsLimit(t *testing.T) {
	flood := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Minute}
	for _, v := range []algorithms.Spec{
		{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: time.Second, MaxDelay: 9 * time.Second},
		{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Minute},
		{Algorithm: algorithms.SlidingLog, Limit: 100, Window: time.Minute},
		{Algorithm: algorithms.SlidingWindow, Limit: 100, Window: time.Minute},
		{Algorithm: algorithms.SlidingBuckets, Limit: 100, Window: time.Minute, Buckets: 4},
		{Algorithm: algorithms.TokenBucket, Limit: 100, Window: time.Minute},
		{Algorithm: algorithms.LeakyBucket, Limit: 100, Window: time.Minute},
	} {
		for _, short := range []int64{0, 1, 20} {
			t.Run(fmt.Sprintf("%s/short%d", v.Algorithm, short), func(t *testing.T) {
				s, _ := newStore(t, algorithms.WithMaxKeys(256))
				victim := []algorithms.Check{{Spec: v, Key: "victim"}}
				for range v.Capacity() - short {
					if d := take(t, s, victim...)[0]; !d.Allowed {
						t.Fatalf("victim's Take: %+v", d)
					}
				}
				var before, after [1]algorithms.Decision
				if err := s.Peek(ctx, before[:], victim); err != nil {
					t.Fatal(err)
				}
				if before[0].Remaining != short {
					t.Fatalf("victim before the flood: %+v, want Remaining %d", before[0], short)
				}
				for i := range 8192 {
					take(t, s, algorithms.Check{Spec: flood, Key: "flood" + strconv.Itoa(i)})
				}
				if err := s.Peek(ctx, after[:], victim); err != nil {
					t.Fatal(err)
				}
				if after[0] != before[0] {
					t.Errorf("victim after 8192 keys using 1 of 1: %+v, want it as before: %+v", after[0], before[0])
				}
			})
		}
	}
}

// TestMemoryStoreEvictionDoesNotAllocate: a new key at the WithMaxKeys
// bound, which weighs a sample of keys of two Specs and evicts one in use,
// is decided without allocating (the keys' strings made beforehand), as a
// held key's is.
func TestMemoryStoreEvictionDoesNotAllocate(t *testing.T) {
	small := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Minute}
	large := algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 100, Window: time.Minute}
	s, _ := newStore(t, algorithms.WithMaxKeys(256))
	keys := make([]string, 8000)
	for i := range keys {
		keys[i] = "k" + strconv.Itoa(i)
	}
	// The bound reached, with keys in use under both Specs, and the
	// shard's record of keys evicted in use made.
	for _, k := range keys[:2000] {
		take(t, s, algorithms.Check{Spec: large, Key: k, Cost: 50}, algorithms.Check{Spec: small, Key: k})
	}
	i := 2000
	n := testing.AllocsPerRun(5000, func() {
		if d, err := s.TakeOne(ctx, algorithms.Check{Spec: small, Key: keys[i]}); err != nil || !d.Allowed {
			t.Fatalf("new key %d: %+v, %v", i, d, err)
		}
		i++
	})
	if n != 0 {
		t.Errorf("TakeOne of a new key at the bound allocates %v times per call, want 0", n)
	}
	if got := s.Len(); got > 256 {
		t.Errorf("Len() = %d, above the bound 256", got)
	}
}
