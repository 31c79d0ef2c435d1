package algorithms_test

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// forgottenSpecs are a Spec of each kind whose GiveBack gives back units,
// each with a capacity of 10 and a window of a minute.
var forgottenSpecs = []algorithms.Spec{
	{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Minute},
	{Algorithm: algorithms.SlidingWindow, Limit: 10, Window: time.Minute},
	{Algorithm: algorithms.SlidingLog, Limit: 10, Window: time.Minute},
	{Algorithm: algorithms.SlidingBuckets, Limit: 10, Window: time.Minute, Buckets: 6},
	{Algorithm: algorithms.TokenBucket, Limit: 10, Window: time.Minute},
	{Algorithm: algorithms.LeakyBucket, Limit: 10, Window: time.Minute},
}

// forgottenQueue is a leaky_queue Spec whose places depart a second apart.
var forgottenQueue = algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 5 * time.Second}

// admitsMore counts the unit requests of c's key admitted now, one by one,
// until one is denied.
func admitsMore(t *testing.T, s algorithms.Store, c algorithms.Check) int {
	t.Helper()
	c.Cost = 1
	n := 0
	for ; n <= 100 && take(t, s, c)[0].Allowed; n++ {
	}
	return n
}

// giveBackOne gives back c's Take, decided ds, waited after it.
func giveBackOne(t *testing.T, s *algorithms.MemoryStore, c algorithms.Check, ds []algorithms.Decision, waited time.Duration) algorithms.Refunded {
	t.Helper()
	dst := make([]algorithms.Refunded, 1)
	if err := s.GiveBack(ctx, dst, []algorithms.Check{c}, ds, waited); err != nil {
		t.Fatal(err)
	}
	return dst[0]
}

// TestMemoryStoreGiveBackAfterEvictionGivesNothingToTheNewKey: a key
// evicted at the WithMaxKeys bound while in use, and made again by later
// Takes, is a new key: a GiveBack (or a Refund) of a Take on the key
// before its eviction gives nothing back, rather than taking the old
// Take's units from the requests counted since. (It took them: the new
// key then admitted 8 more after 6, 14 in its window of 10, the eviction
// having forgotten the old 4 once already.) A Take on the new key is
// given back as any other.
func TestMemoryStoreGiveBackAfterEvictionGivesNothingToTheNewKey(t *testing.T) {
	const ms = time.Millisecond
	for _, spec := range forgottenSpecs {
		t.Run(string(spec.Algorithm), func(t *testing.T) {
			s, clk := newStore(t, algorithms.WithMaxKeys(1)) // one shard of one key
			old := algorithms.Check{Spec: spec, Key: "victim", Cost: 4}
			ds := take(t, s, old)
			clk.Advance(ms)
			take(t, s, algorithms.Check{Spec: spec, Key: "other"}) // evicts victim
			clk.Advance(ms)
			anew := algorithms.Check{Spec: spec, Key: "victim", Cost: 6}
			dsNew := take(t, s, anew) // victim anew, evicting other
			clk.Advance(ms)
			if got := giveBackOne(t, s, old, ds, 3*ms); got.Given {
				t.Errorf("GiveBack of a Take on the evicted key = %+v, want nothing given (the key is a new one)", got)
			}
			if n := admitsMore(t, s, old); n != 4 {
				t.Errorf("after 6 on the new key: %d more admitted, want 4", n)
			}
			// The new key's own Take, after the eviction, comes back.
			if got := giveBackOne(t, s, anew, dsNew, ms); !got.Given {
				t.Errorf("GiveBack of the new key's own Take = %+v, want given", got)
			}
		})
	}
	t.Run("leaky_queue", func(t *testing.T) {
		s, clk := newStore(t, algorithms.WithMaxKeys(1))
		old := algorithms.Check{Spec: forgottenQueue, Key: "victim"}
		ds := take(t, s, old) // departs at once; the queue is free a second later
		clk.Advance(ms)
		take(t, s, algorithms.Check{Spec: forgottenQueue, Key: "other"})
		clk.Advance(ms)
		if d := take(t, s, old)[0]; !d.Allowed || d.Delay != 0 {
			t.Fatalf("the new queue's first request = %+v, want admitted at once", d)
		}
		dst := make([]algorithms.Refunded, 1)
		if err := s.Refund(ctx, dst, []algorithms.Check{old}, ds, 2*ms); err != nil {
			t.Fatal(err)
		}
		if dst[0].Given {
			t.Errorf("Refund of a place in the evicted queue = %+v, want nothing given (the queue is a new one)", dst[0])
		}
		if d := take(t, s, old)[0]; !d.Allowed || d.Delay != time.Second {
			t.Errorf("the new queue's next request = %+v, want admitted after 1s (the place before it kept)", d)
		}
	})
	// A clock that stands still: the Take, the eviction and the new key's
	// Take at one instant. A caller that measures waited from before its
	// Take (as the middleware does) reckons the Take a little earlier than
	// the eviction, and gets nothing back.
	t.Run("one_instant", func(t *testing.T) {
		spec := forgottenSpecs[0]
		s, _ := newStore(t, algorithms.WithMaxKeys(1))
		old := algorithms.Check{Spec: spec, Key: "victim", Cost: 4}
		ds := take(t, s, old)
		take(t, s, algorithms.Check{Spec: spec, Key: "other"})
		take(t, s, algorithms.Check{Spec: spec, Key: "victim", Cost: 6})
		if got := giveBackOne(t, s, old, ds, time.Nanosecond); got.Given {
			t.Errorf("GiveBack of a Take on the evicted key, at one instant = %+v, want nothing given", got)
		}
	})
}

// TestMemoryStoreGiveBackAfterIdleDropGivesNothing: a key dropped while
// idle — by a Sweep, or evicted at the bound once back to its full
// allowance — and made again gives nothing back to a GiveBack of a Take
// from before: every kind finds that Take's units no longer count (its
// window has ended, its log's instant left the window, its bucket
// refilled), the key made again being decided no earlier than the drop.
// So the store need not note such keys.
func TestMemoryStoreGiveBackAfterIdleDropGivesNothing(t *testing.T) {
	for _, spec := range forgottenSpecs {
		for _, how := range []string{"sweep", "eviction"} {
			t.Run(string(spec.Algorithm)+"/"+how, func(t *testing.T) {
				var opts []algorithms.MemoryOption
				if how == "eviction" {
					opts = append(opts, algorithms.WithMaxKeys(1))
				}
				s, clk := newStore(t, opts...)
				old := algorithms.Check{Spec: spec, Key: "k", Cost: 4}
				ds := take(t, s, old)
				// Idle a window later for every kind but sliding_window
				// (two) and the buckets (their 4 units refill in 24 s).
				clk.Advance(2*time.Minute + time.Second)
				if how == "sweep" {
					if n := s.Sweep(); n != 1 {
						t.Fatalf("Sweep dropped %d keys, want the idle one", n)
					}
				} else {
					take(t, s, algorithms.Check{Spec: spec, Key: "other"})
				}
				take(t, s, algorithms.Check{Spec: spec, Key: "k", Cost: 6})
				waited := 2*time.Minute + time.Second
				if got := giveBackOne(t, s, old, ds, waited); got.Given {
					t.Errorf("GiveBack of a Take on the key dropped idle = %+v, want nothing given", got)
				}
				if n := admitsMore(t, s, old); n != 4 {
					t.Errorf("after 6 on the new key: %d more admitted, want 4", n)
				}
			})
		}
	}
}
