package algorithms_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestMemoryStoreQueueCutTogether gives back at one instant the places of
// k requests held in one queue, the last k of it (their clients gone
// together), and compares the queue with a store that never queued them
// but saw every other request at the same instants: the next request's
// Decision (Delay, Remaining, RetryAfter, ...) and a Peek after it must be
// the same. The places go back last first, each as its own Refund or
// GiveBack (held requests of their own Takes), or all in one call (the
// checks of one Take). Given back first first, only the last comes back
// (the rule of algorithms.Refunder: a place with a request queued behind
// it at the refund stays taken, and is not looked at again): that queue is
// compared with a store that queued all of them but the last.
func TestMemoryStoreQueueCutTogether(t *testing.T) {
	// Three departures a second: a spacing of 333,333,333⅓ ns, which the
	// Delays round up.
	queue := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 3, Window: time.Second, MaxDelay: 10 * time.Second}
	type order string
	const (
		lastFirst  order = "last_first"  // one call per held request, the latest place first
		oneCall    order = "one_call"    // the checks of one Take, in one call
		firstFirst order = "first_first" // one call per held request, the earliest place first
	)
	for _, tc := range []struct {
		kept, cut []int64 // the costs of the requests kept, queued first, and of those cut
		order     order
		giveBack  bool          // GiveBack instead of Refund
		at        time.Duration // the cut's instant after the Takes'
	}{
		{kept: nil, cut: []int64{1, 1}, order: lastFirst},
		{kept: []int64{1}, cut: []int64{1, 1, 1}, order: lastFirst, at: 100 * time.Millisecond},
		{kept: []int64{2, 1}, cut: []int64{3, 1, 2, 1}, order: lastFirst, at: 700 * time.Millisecond},
		{kept: []int64{1}, cut: []int64{1, 2, 1}, order: lastFirst, giveBack: true, at: 200 * time.Millisecond},
		{kept: nil, cut: []int64{2, 1, 3}, order: lastFirst, at: 400 * time.Millisecond}, // the first place partly gone
		{kept: []int64{1}, cut: []int64{1, 1, 1}, order: oneCall, at: 100 * time.Millisecond},
		{kept: []int64{3}, cut: []int64{2, 1, 2}, order: oneCall, giveBack: true, at: 500 * time.Millisecond},
		{kept: []int64{1}, cut: []int64{1, 1, 1}, order: firstFirst, at: 100 * time.Millisecond},
		{kept: nil, cut: []int64{2, 1}, order: firstFirst, giveBack: true},
	} {
		name := fmt.Sprintf("kept%v/cut%v/%s/giveBack=%v/at%v", tc.kept, tc.cut, tc.order, tc.giveBack, tc.at)
		t.Run(name, func(t *testing.T) {
			s, clock := newStore(t)
			ref, refClock := newStore(t)
			q := func(cost int64) algorithms.Check { return algorithms.Check{Spec: queue, Key: "k", Cost: cost} }
			// The Takes, all at epoch.
			for _, n := range tc.kept {
				take(t, s, q(n))
				take(t, ref, q(n))
			}
			var cs []algorithms.Check
			for _, n := range tc.cut {
				cs = append(cs, q(n))
			}
			var takes [][]algorithms.Check // the Takes of the cut requests
			if tc.order == oneCall {
				takes = [][]algorithms.Check{cs}
			} else {
				for i := range cs {
					takes = append(takes, cs[i:i+1])
				}
			}
			var ds [][]algorithms.Decision
			for _, c := range takes {
				d := take(t, s, c...)
				for i := range d {
					if !d[i].Allowed {
						t.Fatalf("Take(%v) = %+v, want a place in the queue", c, d)
					}
				}
				ds = append(ds, d)
			}
			// The reference: for first first, every cut request queued
			// but the last.
			gone := len(cs)
			if tc.order == firstFirst {
				gone = 1
				for _, c := range cs[:len(cs)-1] {
					take(t, ref, c)
				}
			}
			clock.Advance(tc.at)
			refClock.Advance(tc.at)
			give := func(c []algorithms.Check, d []algorithms.Decision) []algorithms.Refunded {
				t.Helper()
				dst := make([]algorithms.Refunded, len(c))
				var err error
				if tc.giveBack {
					err = s.GiveBack(ctx, dst, c, d, tc.at)
				} else {
					err = s.Refund(ctx, dst, c, d, tc.at)
				}
				if err != nil {
					t.Fatal(err)
				}
				return dst
			}
			var given []bool
			idx := make([]int, len(takes))
			for i := range idx {
				idx[i] = i
			}
			if tc.order == lastFirst {
				slices.Reverse(idx)
			}
			for _, i := range idx {
				for _, r := range give(takes[i], ds[i]) {
					given = append(given, r.Given)
				}
			}
			if got := countTrue(given); got != gone {
				t.Errorf("places given back (in the order given) %v: %d, want %d", given, got, gone)
			}
			// The next requests, and a look after them, on both stores:
			// one of the queue's whole capacity first, denied (a
			// RetryAfter) unless the queue is empty.
			for _, n := range []int64{queue.Capacity(), 1, 2} {
				got, want := take(t, s, q(n))[0], take(t, ref, q(n))[0]
				if got != want {
					t.Errorf("next Take of cost %d: %+v, want %+v (the queue without the places given back)", n, got, want)
				}
			}
			var got, want [1]algorithms.Decision
			if err := s.Peek(ctx, got[:], []algorithms.Check{q(1)}); err != nil {
				t.Fatal(err)
			}
			if err := ref.Peek(ctx, want[:], []algorithms.Check{q(1)}); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("Peek after = %+v, want %+v", got[0], want[0])
			}
		})
	}
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}
