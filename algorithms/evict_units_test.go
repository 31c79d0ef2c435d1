package algorithms_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestMemoryStoreEvictionWeighsNoMoreThanUnits: at the WithMaxKeys bound,
// a key weighs at most the units it holds, whatever capacity it is
// reckoned at, so displacing a client takes keys holding at least its
// weight in units each: a client at 100 of 100 (weighing 100) outlasts
// any number of keys holding 40 units each, and goes before keys holding
// 101. That holds for keys counted past the capacity they are reckoned at
// both ways: checked at their Spec's limit beside a key judged at a
// lowered one (each of a Spec of 1000 reckoned at 10), and judged at a
// limit raised above their Spec's (each of a Spec of 10 raised to 1000).
// Weighed u·u/C instead, 40 units of a capacity of 10 weighed 160: an
// attacker reset the client for 40 units a key, not 100.
func TestMemoryStoreEvictionWeighsNoMoreThanUnits(t *testing.T) {
	victimSpec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Minute}
	type flood struct {
		spec  algorithms.Spec
		limit int64 // the flood keys' Check.Limit
		low   int64 // a key of the flood's Spec judged at this limit first, if not 0
	}
	var floods []flood
	for _, k := range []algorithms.Kind{algorithms.FixedWindow, algorithms.SlidingWindow, algorithms.SlidingBuckets, algorithms.SlidingLog} {
		big := algorithms.Spec{Algorithm: k, Limit: 1000, Window: time.Minute}
		small := algorithms.Spec{Algorithm: k, Limit: 10, Window: time.Minute}
		if k == algorithms.SlidingBuckets {
			big.Buckets, small.Buckets = 4, 4
		}
		floods = append(floods, flood{spec: big, low: 10})
		if k.Raisable() {
			floods = append(floods, flood{spec: small, limit: 1000})
		}
	}
	for _, f := range floods {
		for _, tc := range []struct {
			cost int64
			kept bool
		}{{40, true}, {99, true}, {101, false}} {
			name := fmt.Sprintf("%s/lowered%d/cost%d", f.spec.Algorithm, f.low, tc.cost)
			if f.limit != 0 {
				name = fmt.Sprintf("%s/raised%d/cost%d", f.spec.Algorithm, f.limit, tc.cost)
			}
			t.Run(name, func(t *testing.T) {
				s, _ := newStore(t, algorithms.WithMaxKeys(256))
				victim := algorithms.Check{Spec: victimSpec, Key: "victim", Cost: 100}
				if d := take(t, s, victim)[0]; !d.Allowed || d.Remaining != 0 {
					t.Fatalf("victim's Take = %+v, want allowed with nothing left", d)
				}
				if f.low != 0 {
					if d := take(t, s, algorithms.Check{Spec: f.spec, Key: "lowered", Limit: f.low})[0]; !d.Allowed {
						t.Fatalf("the lowered key's Take = %+v, want allowed", d)
					}
				}
				for i := range 8192 {
					c := algorithms.Check{Spec: f.spec, Key: "flood" + strconv.Itoa(i), Cost: tc.cost, Limit: f.limit}
					if d := take(t, s, c)[0]; !d.Allowed {
						t.Fatalf("flood key %d refused: %+v", i, d)
					}
				}
				var d [1]algorithms.Decision
				if err := s.Peek(ctx, d[:], []algorithms.Check{{Spec: victimSpec, Key: "victim"}}); err != nil {
					t.Fatal(err)
				}
				if kept := d[0].Remaining == 0; kept != tc.kept {
					t.Errorf("victim at 100 of 100 after 8192 keys of %v (Limit %d, a key judged at %d) holding %d units each: kept %v, want %v (Peek = %+v)",
						f.spec, f.limit, f.low, tc.cost, kept, tc.kept, d[0])
				}
			})
		}
	}
}

// TestMemoryStoreEvictionRaisedClientWeighsItsUnits: a client let past its
// Spec's limit by a raised one (150 of 100, judged at 200) weighs its
// units, 150, as the MemoryStore documentation says: keys of a Spec of 10
// raised to 1000 displace it holding 151 units each and not 149, and keys
// at a Spec of 1000's own limit holding 388 (weighing 150.544) and not 387
// (149.769).
func TestMemoryStoreEvictionRaisedClientWeighsItsUnits(t *testing.T) {
	victimSpec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Minute}
	for _, tc := range []struct {
		spec  algorithms.Spec
		limit int64
		cost  int64
		kept  bool
	}{
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}, 1000, 149, true},
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}, 1000, 151, false},
		{algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 1000, Window: time.Minute}, 0, 387, true},
		{algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 1000, Window: time.Minute}, 0, 388, false},
	} {
		t.Run(fmt.Sprintf("%s/limit%d/cost%d", tc.spec, tc.limit, tc.cost), func(t *testing.T) {
			s, _ := newStore(t, algorithms.WithMaxKeys(256))
			victim := algorithms.Check{Spec: victimSpec, Key: "victim", Cost: 150, Limit: 200}
			if d := take(t, s, victim)[0]; !d.Allowed || d.Remaining != 50 {
				t.Fatalf("victim's Take = %+v, want allowed with 50 left", d)
			}
			for i := range 8192 {
				c := algorithms.Check{Spec: tc.spec, Key: "flood" + strconv.Itoa(i), Cost: tc.cost, Limit: tc.limit}
				if d := take(t, s, c)[0]; !d.Allowed {
					t.Fatalf("flood key %d refused: %+v", i, d)
				}
			}
			var d [1]algorithms.Decision
			if err := s.Peek(ctx, d[:], []algorithms.Check{{Spec: victimSpec, Key: "victim", Limit: 200}}); err != nil {
				t.Fatal(err)
			}
			if kept := d[0].Remaining == 50; kept != tc.kept {
				t.Errorf("victim at 150 of 100 (judged at 200) after 8192 keys of %v (Limit %d) holding %d units each: kept %v, want %v (Peek = %+v)",
					tc.spec, tc.limit, tc.cost, kept, tc.kept, d[0])
			}
		})
	}
}

// TestMemoryStoreEvictionReckonsBesideALoweredKey: a key using 1 of a Spec
// of 1000, beside a key of its Spec judged at a lowered limit of 10,
// counts as 1 of 10 (weighing 0.1), as the MemoryStore documentation says,
// so it outlasts a flood of keys using 1 of 100 (0.01 each); alone in its
// Spec it weighs 0.001 and goes before them.
func TestMemoryStoreEvictionReckonsBesideALoweredKey(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1000, Window: time.Minute}
	flood := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Minute}
	for _, lowered := range []bool{true, false} {
		t.Run(fmt.Sprintf("lowered=%v", lowered), func(t *testing.T) {
			s, _ := newStore(t, algorithms.WithMaxKeys(256))
			if lowered {
				take(t, s, algorithms.Check{Spec: spec, Key: "held", Limit: 10})
			}
			take(t, s, algorithms.Check{Spec: spec, Key: "light"})
			for i := range 4000 {
				if d := take(t, s, algorithms.Check{Spec: flood, Key: "flood" + strconv.Itoa(i)})[0]; !d.Allowed {
					t.Fatalf("flood key %d refused: %+v", i, d)
				}
			}
			var d [1]algorithms.Decision
			if err := s.Peek(ctx, d[:], []algorithms.Check{{Spec: spec, Key: "light"}}); err != nil {
				t.Fatal(err)
			}
			if kept := d[0].Remaining == spec.Limit-1; kept != lowered {
				t.Errorf("key at 1 of 1000 (beside one judged at 10: %v) after 4000 keys using 1 of 100: kept %v, want %v (Peek = %+v)", lowered, kept, lowered, d[0])
			}
		})
	}
}
