package algorithms_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestMemoryStoreGiveBackUnderAFloodAtTheBound: a flood of new keys at the
// WithMaxKeys bound evicts keys in use (each flooding key made one request)
// between a client's Take and its GiveBack (or, for a leaky_queue, its
// Refund of a place still to depart); the client's key, never evicted,
// gets its units back as long as no more keys in use of its shard were
// evicted since its Take than the shard holds the latest of, at least 64
// (MemoryStore.GiveBack). (With only the class of each evicted key's hash
// noted, 64 classes a shard at this bound, a flood of 60 left most
// give-backs empty: a class hit by one of 60 evictions, about 61% of the
// keys; and a Refund, which reckons its Take at MaxDelay before its
// place's departure, as often.)
func TestMemoryStoreGiveBackUnderAFloodAtTheBound(t *testing.T) {
	const (
		ms      = time.Millisecond
		bound   = 256 // one shard
		victims = 32
		flood   = 60
	)
	for _, tc := range []struct {
		spec algorithms.Spec
		cost int64 // the victims' share: above the flood's
		left int64 // the victim's Remaining after its give-back
	}{
		{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute}, 5, 10},
		// Places depart a second apart; a queue holds 6: the victim's
		// second place, a second on, is refunded.
		// Its first place leaves the queue 1 s on: 5 of 6 places free.
		{algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 5 * time.Second}, 1, 5},
	} {
		t.Run(string(tc.spec.Algorithm), func(t *testing.T) {
			spec := tc.spec
			queue := spec.Algorithm == algorithms.LeakyQueue
			s, clk := newStore(t, algorithms.WithMaxKeys(bound))
			victim := func(i int) algorithms.Check {
				return algorithms.Check{Spec: spec, Key: "victim-" + strconv.Itoa(i), Cost: tc.cost}
			}
			var ds [victims][]algorithms.Decision
			for i := range victims {
				if queue {
					take(t, s, victim(i)) // departs at once
				}
				ds[i] = take(t, s, victim(i))
			}
			for i := range bound - victims {
				take(t, s, algorithms.Check{Spec: spec, Key: "filler-" + strconv.Itoa(i)})
			}
			clk.Advance(ms)
			for i := range flood {
				take(t, s, algorithms.Check{Spec: spec, Key: "flood-" + strconv.Itoa(i)}) // each evicts a key of one request
			}
			if n := s.Len(); n != bound {
				t.Fatalf("Len = %d, want the bound %d", n, bound)
			}
			clk.Advance(ms)
			refused := 0
			for i := range victims {
				dst := make([]algorithms.Refunded, 1)
				var err error
				if queue {
					err = s.Refund(ctx, dst, []algorithms.Check{victim(i)}, ds[i], 2*ms+time.Nanosecond)
				} else {
					err = s.GiveBack(ctx, dst, []algorithms.Check{victim(i)}, ds[i], 2*ms+time.Nanosecond)
				}
				if err != nil {
					t.Fatal(err)
				}
				if !dst[0].Given {
					refused++
				} else if dst[0].Remaining != tc.left {
					t.Errorf("victim %d after its give-back: %+v, want %d remaining (never evicted)", i, dst[0], tc.left)
				}
			}
			if refused > 0 {
				t.Errorf("%d of %d give-backs of keys never evicted gave nothing back after %d evictions in use in their shard, want none", refused, victims, flood)
			}
		})
	}
}
