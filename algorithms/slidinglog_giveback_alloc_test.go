package algorithms_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestSlidingLogTakeThenGiveBackDoesNotAllocate: the use GiveBack is made
// for, a limit on failed logins whose successful ones are given back, on
// a client with one failed login in the window. Each successful login is
// a TakeOne on its held key, which TakeOne's documentation says does not
// allocate, and a GiveBack of it: once the key holds two instants, a
// round of the two must not make TakeOne allocate again (the key must not
// go back and forth between its slot and a log of its own).
func TestSlidingLogTakeThenGiveBackDoesNotAllocate(t *testing.T) {
	s, clk := newStore(t)
	c := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Minute}, Key: "user"}
	take(t, s, c) // the failed login, counted
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var ms runtime.MemStats
	mallocs := func() uint64 {
		runtime.ReadMemStats(&ms)
		return ms.Mallocs
	}
	const rounds = 20
	var n uint64
	for i := range rounds {
		clk.Advance(time.Second)
		before := mallocs()
		d, err := s.TakeOne(ctx, c)
		if i > 0 {
			// The first spills the key: its log is made.
			n += mallocs() - before
		}
		if err != nil || !d.Allowed {
			t.Fatalf("round %d: TakeOne = %+v, %v; want admitted", i, d, err)
		}
		var r [1]algorithms.Refunded
		if err := s.GiveBack(ctx, r[:], []algorithms.Check{c}, []algorithms.Decision{d}, 0); err != nil || !r[0].Given {
			t.Fatalf("round %d: GiveBack = %+v, %v; want given", i, r[0], err)
		}
	}
	if n != 0 {
		t.Errorf("%d rounds of TakeOne then GiveBack on a key with one other event in the window: TakeOne allocated %d times after the first", rounds, n)
	}
}
