package algorithms_test

import (
	"strconv"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestMemoryStoreEvictionTiesAreNotTheVictims pins what MemoryStore's
// documentation says of the WithMaxKeys bound: an attacker displaces a
// limited client only with keys each using at least as large a share of
// their capacity. A flood of keys each using less than the client (2 of 10
// against 3 of 10) never evicts it; a flood of keys each using as much (3
// of 10) does, for eviction takes the first key of the smallest share in its
// sample and cannot tell the client from the flood (the client is the
// first of a sample in at least one eviction in about 330, the table's
// slots at this bound: over 7,900 evictions it goes with a probability
// above 1 − 10^-10).
func TestMemoryStoreEvictionTiesAreNotTheVictims(t *testing.T) {
	for _, tc := range []struct {
		floodCost int64
		evicted   bool
	}{{2, false}, {3, true}} {
		s, _ := newStore(t, algorithms.WithMaxKeys(256))
		victim := algorithms.Check{Spec: perSecond, Key: "victim", Cost: 3}
		take(t, s, victim)
		for i := range 8192 {
			if d := take(t, s, algorithms.Check{Spec: perSecond, Key: "flood" + strconv.Itoa(i), Cost: tc.floodCost})[0]; !d.Allowed {
				t.Fatalf("flood cost %d: flood key %d refused: %+v", tc.floodCost, i, d)
			}
		}
		var d [1]algorithms.Decision
		if err := s.Peek(ctx, d[:], []algorithms.Check{{Spec: perSecond, Key: "victim"}}); err != nil {
			t.Fatal(err)
		}
		if evicted := d[0].Remaining == perSecond.Limit; evicted != tc.evicted {
			t.Errorf("flood of keys using %d of 10 against a client using 3: client evicted %v, want %v (%+v)", tc.floodCost, evicted, tc.evicted, d[0])
		}
	}
}
