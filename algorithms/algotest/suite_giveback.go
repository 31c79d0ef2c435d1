package algotest

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// giveBackSpecs are the kinds GiveBack gives units back to, each 5 per 10 s
// (sliding_buckets in 2 s sub-windows), at Base aligned to their windows.
func giveBackSpecs() []algorithms.Spec {
	const w = 10 * time.Second
	return []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 5, Window: w},
		{Algorithm: algorithms.SlidingWindow, Limit: 5, Window: w},
		{Algorithm: algorithms.SlidingLog, Limit: 5, Window: w},
		{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: w, Buckets: 5},
		{Algorithm: algorithms.TokenBucket, Limit: 5, Window: w},
		{Algorithm: algorithms.LeakyBucket, Limit: 5, Window: w},
	}
}

// runGiveBack checks [algorithms.GiveBacker.GiveBack]: the named cases state,
// per kind, whether a Take's units come back and what the key admits
// after, and every Take and GiveBack is compared with the [Model]
// ([Model.GiveBackAt]); GiveBack/model_traces compares random Takes and
// give-backs, with waits the caller reckons off by up to a third of a
// window and a clock that steps back, decision by decision.
func runGiveBack(t *testing.T, h Harness) {
	if _, ok := h.New(t, NewClock(Base)).(algorithms.GiveBacker); !ok {
		t.Skip("the store does not implement algorithms.GiveBacker")
	}
	type g struct {
		*env
		store algorithms.GiveBacker
	}
	newG := func(t *testing.T) *g {
		e := newEnv(t, h)
		return &g{e, e.store.(algorithms.GiveBacker)}
	}
	// give gives back at Base+at a Take made at Base+took, on the store and
	// on the Model, and requires the same reports.
	give := func(e *g, took, at time.Duration, checks []algorithms.Check, ds []algorithms.Decision) []algorithms.Refunded {
		e.t.Helper()
		return giveBackBoth(e.t, e.clock, e.store, e.model, at, at-took, checks, ds)
	}
	const s = time.Second
	ms := time.Millisecond

	type kindCase struct {
		given     bool
		remaining int64 // what the key admits after the give-back
	}
	cases := []struct {
		name string
		run  func(e *g, c func(cost int64) algorithms.Check) algorithms.Refunded
		want map[algorithms.Kind]kindCase
	}{
		{
			// Five units at +1 s fill every kind; the third comes back at once.
			name: "same_window",
			run: func(e *g, c func(int64) algorithms.Check) algorithms.Refunded {
				var third []algorithms.Decision
				for i := range 5 {
					ds := e.take(s, c(1))
					if i == 2 {
						third = ds
					}
				}
				if d := e.take(s, c(1))[0]; d.Allowed {
					e.t.Fatalf("a sixth unit admitted: %+v", d)
				}
				return give(e, s, s, []algorithms.Check{c(1)}, third)[0]
			},
			want: map[algorithms.Kind]kindCase{
				algorithms.FixedWindow: {true, 1}, algorithms.SlidingWindow: {true, 1}, algorithms.SlidingLog: {true, 1},
				algorithms.SlidingBuckets: {true, 1}, algorithms.TokenBucket: {true, 1}, algorithms.LeakyBucket: {true, 1},
			},
		},
		{
			// Given back 20 s later: every kind has let the units go.
			name: "after_the_window",
			run: func(e *g, c func(int64) algorithms.Check) algorithms.Refunded {
				var ds []algorithms.Decision
				for range 5 {
					ds = e.take(s, c(1))
				}
				return give(e, s, 21*s, []algorithms.Check{c(1)}, ds)[0]
			},
			want: map[algorithms.Kind]kindCase{
				algorithms.FixedWindow: {false, 5}, algorithms.SlidingWindow: {false, 5}, algorithms.SlidingLog: {false, 5},
				algorithms.SlidingBuckets: {false, 5}, algorithms.TokenBucket: {false, 5}, algorithms.LeakyBucket: {false, 5},
			},
		},
		{
			// Five units at +9 s, the last given back at +15 s: fixed_window's
			// window has rolled (nothing back); sliding_window's previous
			// counter drops to 4 (weight 0.5: 2 in use, 3 left, where 5 would
			// leave 2); the log and the buckets still hold it (4 in use); the
			// buckets have refilled 3 of the 5, and the Take's unit, the last
			// of the deficit, had not begun to refill: it comes back whole,
			// 4 tokens, as if only four had come.
			name: "window_rolled",
			run: func(e *g, c func(int64) algorithms.Check) algorithms.Refunded {
				var ds []algorithms.Decision
				for range 5 {
					ds = e.take(9*s, c(1))
				}
				return give(e, 9*s, 15*s, []algorithms.Check{c(1)}, ds)[0]
			},
			want: map[algorithms.Kind]kindCase{
				algorithms.FixedWindow: {false, 5}, algorithms.SlidingWindow: {true, 3}, algorithms.SlidingLog: {true, 1},
				algorithms.SlidingBuckets: {true, 1}, algorithms.TokenBucket: {true, 4}, algorithms.LeakyBucket: {true, 4},
			},
		},
		{
			// Five units at +1 s, the last given back at +10 s, the very
			// instant fixed_window's next window begins: its window has
			// ended there (nothing back, 5 left in the new one); so has
			// the buckets' first bucket. sliding_window's previous counter
			// weighs whole at the start of the window (1 left), and the
			// log still holds +1 s; the buckets had not refilled the
			// Take's unit, the last of the deficit: all come back.
			name: "window_end",
			run: func(e *g, c func(int64) algorithms.Check) algorithms.Refunded {
				var ds []algorithms.Decision
				for range 5 {
					ds = e.take(s, c(1))
				}
				got := give(e, s, 10*s, []algorithms.Check{c(1)}, ds)[0]
				// A request from a clock a little behind is decided where
				// the give-back left the key, as the model decides it.
				e.take(9500*ms, c(1))
				return got
			},
			want: map[algorithms.Kind]kindCase{
				algorithms.FixedWindow: {false, 5}, algorithms.SlidingWindow: {true, 1}, algorithms.SlidingLog: {true, 1},
				algorithms.SlidingBuckets: {false, 5}, algorithms.TokenBucket: {true, 5}, algorithms.LeakyBucket: {true, 5},
			},
		},
		{
			// Five units at +1 s, the last given back at +20 s, the very
			// instant sliding_window's Take counts in no window any more
			// (two windows after its own began): nothing back, in any kind.
			name: "two_windows_end",
			run: func(e *g, c func(int64) algorithms.Check) algorithms.Refunded {
				var ds []algorithms.Decision
				for range 5 {
					ds = e.take(s, c(1))
				}
				return give(e, s, 20*s, []algorithms.Check{c(1)}, ds)[0]
			},
			want: map[algorithms.Kind]kindCase{
				algorithms.FixedWindow: {false, 5}, algorithms.SlidingWindow: {false, 5}, algorithms.SlidingLog: {false, 5},
				algorithms.SlidingBuckets: {false, 5}, algorithms.TokenBucket: {false, 5}, algorithms.LeakyBucket: {false, 5},
			},
		},
		{
			// One unit at +1 s, given back twice: the second time the key
			// holds nothing to give.
			name: "given_twice",
			run: func(e *g, c func(int64) algorithms.Check) algorithms.Refunded {
				ds := e.take(s, c(1))
				give(e, s, s, []algorithms.Check{c(1)}, ds)
				return give(e, s, s, []algorithms.Check{c(1)}, ds)[0]
			},
			want: map[algorithms.Kind]kindCase{
				algorithms.FixedWindow: {false, 5}, algorithms.SlidingWindow: {false, 5}, algorithms.SlidingLog: {false, 5},
				algorithms.SlidingBuckets: {false, 5}, algorithms.TokenBucket: {false, 5}, algorithms.LeakyBucket: {false, 5},
			},
		},
		{
			// The same, given back twice in the next window, where
			// sliding_window holds the unit in its previous counter.
			name: "given_twice_next_window",
			run: func(e *g, c func(int64) algorithms.Check) algorithms.Refunded {
				ds := e.take(s, c(1))
				give(e, s, 11*s, []algorithms.Check{c(1)}, ds)
				return give(e, s, 11*s, []algorithms.Check{c(1)}, ds)[0]
			},
			want: map[algorithms.Kind]kindCase{
				algorithms.FixedWindow: {false, 5}, algorithms.SlidingWindow: {false, 5}, algorithms.SlidingLog: {false, 5},
				algorithms.SlidingBuckets: {false, 5}, algorithms.TokenBucket: {false, 5}, algorithms.LeakyBucket: {false, 5},
			},
		},
		{
			// A Take of cost 3, then one of cost 1: the 3 come back.
			name: "cost_3",
			run: func(e *g, c func(int64) algorithms.Check) algorithms.Refunded {
				ds := e.take(s, c(3))
				e.take(s, c(1))
				return give(e, s, s, []algorithms.Check{c(3)}, ds)[0]
			},
			want: map[algorithms.Kind]kindCase{
				algorithms.FixedWindow: {true, 4}, algorithms.SlidingWindow: {true, 4}, algorithms.SlidingLog: {true, 4},
				algorithms.SlidingBuckets: {true, 4}, algorithms.TokenBucket: {true, 4}, algorithms.LeakyBucket: {true, 4},
			},
		},
		{
			// A at +1 s, B and C at +1.5 s, A given back at +1.5 s: 2 in
			// use. The buckets: A's unit had 1.5 s of its 2 s left (0.75
			// back), the bucket 2.25 + 0.75 = 3 tokens, as without A.
			name: "others_between",
			run: func(e *g, c func(int64) algorithms.Check) algorithms.Refunded {
				ds := e.take(s, c(1))
				e.take(1500*ms, c(1))
				e.take(1500*ms, c(1))
				return give(e, s, 1500*ms, []algorithms.Check{c(1)}, ds)[0]
			},
			want: map[algorithms.Kind]kindCase{
				algorithms.FixedWindow: {true, 3}, algorithms.SlidingWindow: {true, 3}, algorithms.SlidingLog: {true, 3},
				algorithms.SlidingBuckets: {true, 3}, algorithms.TokenBucket: {true, 3}, algorithms.LeakyBucket: {true, 3},
			},
		},
		{
			// A at +1 s, B at +15 s, A given back at +15 s, its reckoning
			// exact: A has left every window but sliding_window's, where
			// it still weighs in (the previous counter) and comes back;
			// elsewhere nothing comes back and B stays counted. (A
			// sliding_log that gave back the instant nearest A's among
			// those left, B's, admitted 5, one more than without A.)
			name: "taken_left_window",
			run: func(e *g, c func(int64) algorithms.Check) algorithms.Refunded {
				ds := e.take(s, c(1))
				e.take(15*s, c(1))
				return give(e, s, 15*s, []algorithms.Check{c(1)}, ds)[0]
			},
			want: map[algorithms.Kind]kindCase{
				algorithms.FixedWindow: {false, 4}, algorithms.SlidingWindow: {true, 4}, algorithms.SlidingLog: {false, 4},
				algorithms.SlidingBuckets: {false, 4}, algorithms.TokenBucket: {false, 4}, algorithms.LeakyBucket: {false, 4},
			},
		},
		{
			// A at +1 s, B at +3 s (another bucket, another log instant), A
			// given back at +3 s. The buckets: A's deficit had refilled by
			// +3 s: nothing back (4 tokens, 5 without A: GiveBack cannot
			// tell B did not arrive at +1 s, when the bucket lacked A's unit).
			name: "later_request",
			run: func(e *g, c func(int64) algorithms.Check) algorithms.Refunded {
				ds := e.take(s, c(1))
				e.take(3*s, c(1))
				return give(e, s, 3*s, []algorithms.Check{c(1)}, ds)[0]
			},
			want: map[algorithms.Kind]kindCase{
				algorithms.FixedWindow: {true, 4}, algorithms.SlidingWindow: {true, 4}, algorithms.SlidingLog: {true, 4},
				algorithms.SlidingBuckets: {true, 4}, algorithms.TokenBucket: {false, 4}, algorithms.LeakyBucket: {false, 4},
			},
		},
	}
	for _, tc := range cases {
		for _, sp := range giveBackSpecs() {
			t.Run(tc.name+"/"+string(sp.Algorithm), func(t *testing.T) {
				e := newG(t)
				c := func(cost int64) algorithms.Check { return algorithms.Check{Spec: sp, Key: "k", Cost: cost} }
				got := tc.run(e, c)
				want := tc.want[sp.Algorithm]
				if got.Given != want.given || got.Remaining != want.remaining {
					t.Errorf("reported Given %v, Remaining %d (%+v); want Given %v, Remaining %d", got.Given, got.Remaining, got, want.given, want.remaining)
				}
			})
		}
	}

	// sliding_log gives back the units of the logged instant nearest the
	// caller's reckoning of the Take's, among those still in the window,
	// the older on a tie. 5 per 10 s.
	t.Run("log_nearest/"+string(algorithms.SlidingLog), func(t *testing.T) {
		c := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 5, Window: 10 * s}, Key: "k"}
		t.Run("tie_to_the_older", func(t *testing.T) {
			// A at +1 s, B at +3 s, given back then, reckoned at +2 s:
			// A's unit comes back, so at +11.5 s (A's instant gone
			// anyway) B's still counts: 4 left, 3 after a request.
			e := newG(t)
			ds := e.take(s, c)
			e.take(3*s, c)
			if got := give(e, 2*s, 3*s, []algorithms.Check{c}, ds)[0]; !got.Given || got.Remaining != 4 {
				t.Errorf("given back: %+v, want given, 4 left", got)
			}
			if d := e.take(11500*ms, c)[0]; d.Remaining != 3 {
				t.Errorf("a request at +11.5 s: %+v, want 3 left after it (B's unit counted)", d)
			}
		})
		t.Run("left_the_window", func(t *testing.T) {
			// A at +1 s, B at +9 s, given back at +11.5 s reckoned at
			// +1.6 s (in the window, A's +1 s no longer is): B's unit,
			// the nearest still in the window, comes back: 5 left.
			e := newG(t)
			ds := e.take(s, c)
			e.take(9*s, c)
			if got := give(e, 1600*ms, 11500*ms, []algorithms.Check{c}, ds)[0]; !got.Given || got.Remaining != 5 {
				t.Errorf("given back: %+v, want given, 5 left", got)
			}
		})
	})

	// The buckets when a unit's time (W/L) is no whole number of ns: a
	// Take's ResetAfter is its deficit rounded up to the ns, which bounds
	// the give-back; the store must not give back that rounding. In
	// each, X is given back at the instant Y is taken, after X's deficit
	// has partly refilled; without X the bucket would hold one unit less
	// than full until Y's unit refills, and the key must never admit more.
	for _, kind := range []algorithms.Kind{algorithms.TokenBucket, algorithms.LeakyBucket} {
		t.Run("unit_fraction/"+string(kind), func(t *testing.T) {
			// 3 per 10 s, a unit 3⅓ s: X at +1 s, Y at +2 s, X given
			// back then (2/3 s of X's unit is left; its ResetAfter,
			// 3333333334 ns, rounds it up by 2/3 ns). 3333333333 ns
			// later Y's unit lacks 1/3 ns: 2 units are there (3 had X's
			// give-back taken that 2/3 ns too).
			e := newG(t)
			c := algorithms.Check{Spec: algorithms.Spec{Algorithm: kind, Limit: 3, Window: 10 * s}, Key: "k"}
			ds := e.take(s, c)
			e.take(2*s, c)
			if got := give(e, s, 2*s, []algorithms.Check{c}, ds)[0]; !got.Given || got.Remaining != 2 {
				t.Errorf("X given back: %+v, want given, 2 left", got)
			}
			if d := e.take(2*s+3333333333, c)[0]; !d.Allowed || d.Remaining != 1 {
				t.Errorf("a unit 3333333333 ns after the give-back: %+v, want admitted, 1 left (without X 2 were there)", d)
			}
		})
		t.Run("sub_ns_unit/"+string(kind), func(t *testing.T) {
			// 3·10^6 per ms, a unit 1/3 ns, 6 at most: X of cost 4 at
			// +1 s (full 4/3 ns later), Y at +1 s + 1 ns, X given back
			// then. X has 1/3 ns left, one unit: 5 are there, as
			// without X. Its ResetAfter (2 ns) allows 1 ns, and the
			// bucket's deficit (2/3 ns) is a whole number of units
			// short of what the ResetAfter allows in two ways: only X's
			// Remaining (2: 4 in use) tells them apart.
			e := newG(t)
			c := func(n int64) algorithms.Check {
				return algorithms.Check{Spec: algorithms.Spec{Algorithm: kind, Limit: 3_000_000, Window: ms, Burst: 6}, Key: "k", Cost: n}
			}
			ds := e.take(s, c(4))
			e.take(s+1, c(1))
			if got := give(e, s, s+1, []algorithms.Check{c(4)}, ds)[0]; !got.Given || got.Remaining != 5 {
				t.Errorf("X given back: %+v, want given, 5 left (without X)", got)
			}
		})
		// Give-backs out of order (GiveBacker.GiveBack's worked example):
		// 5 a minute (a unit 12 s), burst 7. A and B of 2 at 0 s, A given
		// back at once (its 2 units come back: B's units move up to
		// 0-24 s), 3 at 20 s, B given back at 30 s. Without A and B the
		// bucket is full at 0 and 20 s, holds 4 after the 3 and 4.83 at
		// 30 s. B's decision reckons its units 24-48 s, behind A's; given
		// back by that, 18 s of them, the bucket would hold 6. B was
		// decided at the instant of A's give-back, which the store cannot
		// order against it, and the bucket held B's 2 units right after
		// it (24 s): B may have come before it, its units then moved up
		// by at most what came back there (24 s), to 0-24 s, refilled by
		// 30 s. Nothing comes back: 4.5 tokens, 4 whole.
		t.Run("out_of_order_world/"+string(kind), func(t *testing.T) {
			e := newG(t)
			c := func(n int64) algorithms.Check {
				return algorithms.Check{Spec: algorithms.Spec{Algorithm: kind, Limit: 5, Window: time.Minute, Burst: 7}, Key: "k", Cost: n}
			}
			a := e.take(0, c(2))
			b := e.take(0, c(2))
			if got := give(e, 0, 0, []algorithms.Check{c(2)}, a)[0]; !got.Given || got.Remaining != 5 {
				t.Errorf("A given back at once: %+v, want given, 5 left", got)
			}
			if d := e.take(20*s, c(3))[0]; !d.Allowed {
				t.Fatalf("3 at +20 s: %+v, want admitted", d)
			}
			if got := give(e, 0, 30*s, []algorithms.Check{c(2)}, b)[0]; got.Given || got.Remaining != 4 {
				t.Errorf("B given back at +30 s: %+v, want nothing back, 4 left (4.5 tokens; 4.83 without A and B)", got)
			}
			if d := e.take(30*s, c(5))[0]; d.Allowed {
				t.Errorf("5 at +30 s: %+v, want denied (4.83 tokens without A and B)", d)
			}
		})
		// A Take at the instant of a give-back that came before it (one
		// client's requests one after the other, a fake clock): X of 1 at
		// 0 s, S of 1 at 0 s given back at 2 s, T of 1 at 2 s given back
		// at 4 s. Right after S's give-back the bucket held 10 s, less
		// than T's own unit: T came after it, and its decision stands. It
		// comes back whole: X's unit alone is in use, full at 12 s
		// (ResetAfter 8 s), as without S and T.
		t.Run("tie_after_give_back/"+string(kind), func(t *testing.T) {
			e := newG(t)
			c := algorithms.Check{Spec: algorithms.Spec{Algorithm: kind, Limit: 5, Window: time.Minute, Burst: 7}, Key: "k"}
			e.take(0, c)
			sd := e.take(0, c)
			if got := give(e, 0, 2*s, []algorithms.Check{c}, sd)[0]; !got.Given || got.ResetAfter != 10*s {
				t.Errorf("S given back: %+v, want given, full in 10 s", got)
			}
			td := e.take(2*s, c)
			if got := give(e, 2*s, 4*s, []algorithms.Check{c}, td)[0]; !got.Given || got.ResetAfter != 8*s || got.Remaining != 6 {
				t.Errorf("T given back: %+v, want given, 6 left, full in 8 s (as without S and T)", got)
			}
		})
	}

	t.Run("reckoned_midway", func(t *testing.T) { giveBackMidway(t, h) })
	t.Run("denied_take", func(t *testing.T) {
		e := newG(t)
		sp := giveBackSpecs()[0]
		full := algorithms.Check{Spec: sp, Key: "full", Cost: 5}
		e.take(s, full)
		c := []algorithms.Check{{Spec: sp, Key: "k"}, full}
		e.take(s, c[0])
		ds := e.take(s, c...)
		if ds[1].Allowed {
			t.Fatalf("the full key admitted: %+v", ds[1])
		}
		got := give(e, s, s, c, ds)
		if got[0].Given || got[1].Given || got[0].Remaining != 4 {
			t.Errorf("a denied Take's give-back: %+v, want nothing given back and k at 4", got)
		}
	})
	t.Run("stacked", func(t *testing.T) {
		// One Take on two keys and the same key twice: all come back.
		e := newG(t)
		sp := giveBackSpecs()[2] // sliding_log
		c := []algorithms.Check{{Spec: sp, Key: "a"}, {Spec: sp, Key: "b", Cost: 2}, {Spec: sp, Key: "a", Cost: 2}}
		ds := e.take(s, c...)
		got := give(e, s, 2*s, c, ds)
		for i := range got {
			if !got[i].Given || got[i].Remaining != 5 {
				t.Errorf("check %d: %+v, want given back and 5 left", i, got[i])
			}
		}
	})
	for _, kind := range []algorithms.Kind{algorithms.TokenBucket, algorithms.LeakyBucket} {
		// One Take of the same bucket key twice, given back a unit's time
		// later: 5 a minute, burst 7, 3 at 0 s, then one Take of 2 and 2
		// at 0 s, given back at 12 s. The second check comes back first
		// and notes its give-back; the first one's units were ahead of the
		// second's, so that give-back moved none of them up, and its
		// decision still stands: both come back whole, and the bucket is
		// as without the Take (3 used at 0 s, a unit refilled by 12 s:
		// 5 left).
		t.Run("stacked_bucket/"+string(kind), func(t *testing.T) {
			e := newG(t)
			c := func(n int64) algorithms.Check {
				return algorithms.Check{Spec: algorithms.Spec{Algorithm: kind, Limit: 5, Window: time.Minute, Burst: 7}, Key: "k", Cost: n}
			}
			e.take(0, c(3))
			cs := []algorithms.Check{c(2), c(2)}
			ds := e.take(0, cs...)
			got := give(e, 0, 12*s, cs, ds)
			for i := range got {
				if !got[i].Given || got[i].Remaining != 5 {
					t.Errorf("check %d given back at 12 s: %+v, want given, 5 left (as without the Take)", i, got[i])
				}
			}
		})
	}
	t.Run("log_neighbour", func(t *testing.T) {
		// sliding_log: A at +1 s and B 1 ns later; A's give-back takes A's
		// unit, so B, the newest, still sets ResetAfter (W + 1 ns after it).
		e := newG(t)
		c := algorithms.Check{Spec: giveBackSpecs()[2], Key: "k"}
		ds := e.take(s, c)
		e.take(s+1, c)
		got := give(e, s, s+1, []algorithms.Check{c}, ds)
		if !got[0].Given || got[0].Remaining != 4 || got[0].ResetAfter != 10*s+1 {
			t.Errorf("A given back beside B: %+v, want given, 4 left, ResetAfter 10.000000001s", got[0])
		}
	})
	t.Run("log_nearest_holds_less", func(t *testing.T) {
		// sliding_log: A (1 unit) at +1 s, B (3 units) at +2 s; B given
		// back at +3 s by a caller whose wait is 0.6 s too long: reckoned
		// at +1.4 s, nearer A's instant, whose event loses what it holds,
		// 1 unit, not the cost of 3: B's 3 still count (2 left, clear
		// W + 1 ns after +2 s), and a Take of 2 fills the window.
		e := newG(t)
		sp := giveBackSpecs()[2]
		e.take(s, algorithms.Check{Spec: sp, Key: "k"})
		b := []algorithms.Check{{Spec: sp, Key: "k", Cost: 3}}
		ds := e.take(2*s, b...)
		got := giveBackBoth(t, e.clock, e.store, e.model, 3*s, 1600*ms, b, ds)[0]
		if !got.Given || got.Remaining != 2 || got.ResetAfter != 9*s+1 {
			t.Errorf("B given back reckoned at +1.4 s: %+v, want given, 2 left, ResetAfter 9.000000001s (B's 3 units)", got)
		}
		if d := e.take(3*s, algorithms.Check{Spec: sp, Key: "k", Cost: 2})[0]; !d.Allowed || d.Remaining != 0 {
			t.Errorf("a Take of 2 at +3 s after the give-back: %+v, want admitted with 0 left", d)
		}
	})
	t.Run("log_ahead", func(t *testing.T) {
		// sliding_log 5 per 10 s: 2 units at +1 s, 3 at +6 s; the +6 s
		// Take given back at +11.5 s (a window after +1 s) gives back one
		// of its units and forgets nothing: back at +6 s, by a clock that
		// read the time before the give-back, the +1 s units still count.
		e := newG(t)
		sp := giveBackSpecs()[2]
		e.take(s, algorithms.Check{Spec: sp, Key: "k", Cost: 2})
		c := []algorithms.Check{{Spec: sp, Key: "k"}}
		e.take(6*s, algorithms.Check{Spec: sp, Key: "k", Cost: 2})
		ds := e.take(6*s, c...)
		if got := give(e, 6*s, 11*s+500*ms, c, ds); !got[0].Given {
			t.Errorf("the +6 s Take given back at +11.5 s: %+v, want given", got[0])
		}
		if d := e.take(6*s, c...)[0]; !d.Allowed || d.Remaining != 0 {
			t.Errorf("a Take at +6 s after the give-back: %+v, want admitted with 0 left (the +1 s units still count)", d)
		}
	})
	t.Run("log_reckoned_off", func(t *testing.T) {
		// sliding_log: A at +1 s, B at +2 s; B given back at +3 s by a
		// caller whose wait is 1 µs too long (its clock read before the
		// Take, as the middleware's is) or too short: B's unit comes back
		// either way (the instant nearest the reckoning), and A's stays,
		// clear of the window 11 s + 1 ns after Base.
		for _, off := range []time.Duration{time.Microsecond, -time.Microsecond} {
			e := newG(t)
			c := algorithms.Check{Spec: giveBackSpecs()[2], Key: "k"}
			e.take(s, c)
			ds := e.take(2*s, c)
			got := giveBackBoth(t, e.clock, e.store, e.model, 3*s, s+off, []algorithms.Check{c}, ds)
			if !got[0].Given || got[0].Remaining != 4 || got[0].ResetAfter != 8*s+1 {
				t.Errorf("B given back, waited off by %v: %+v, want given, 4 left, ResetAfter 8.000000001s (A's)", off, got[0])
			}
		}
	})
	t.Run("queue_place", func(t *testing.T) {
		// leaky_queue: the place of a request still queued comes back; the
		// place of one passed on has gone.
		e := newG(t)
		q := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: s, MaxDelay: 10 * s}, Key: "q"}
		e.take(0, q)
		ds := e.take(0, q) // departs at 1 s
		if got := give(e, 0, 500*ms, []algorithms.Check{q}, ds); !got[0].Given {
			t.Errorf("a queued last place: %+v, want given back", got[0])
		}
		ds = e.take(2*s, q)
		if got := give(e, 2*s, 3500*ms, []algorithms.Check{q}, ds); got[0].Given {
			t.Errorf("a place passed on 1.5 s ago: %+v, want nothing back", got[0])
		}
	})
	t.Run("model_traces", func(t *testing.T) {
		var given, kept int
		for seed := range uint64(4) {
			gv, kp := giveBackTrace(t, h, seed, 300)
			given += gv
			kept += kp
		}
		t.Logf("%d give-backs gave units back, %d gave none", given, kept)
		if given < 100 || kept < 50 {
			t.Errorf("the traces gave back %d times and kept %d times: want both kinds of outcome, at least 100 and 50", given, kept)
		}
	})
}

// giveBackBoth gives back at Base+at, after waited, on store and on
// model, fails t when their errors or reports differ, and returns the
// store's.
func giveBackBoth(t *testing.T, clock *Clock, store algorithms.GiveBacker, model *Model, at, waited time.Duration, checks []algorithms.Check, ds []algorithms.Decision) []algorithms.Refunded {
	t.Helper()
	clock.Set(Base.Add(at))
	got := make([]algorithms.Refunded, len(checks))
	err := store.GiveBack(t.Context(), got, checks, ds, waited)
	want, werr := model.GiveBackAt(Base.Add(at), checks, ds, waited)
	if err != nil || werr != nil {
		t.Fatalf("GiveBack(%s) at +%v, waited %v: error %v, the model's %v", formatChecks(checks), at, waited, err, werr)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("GiveBack(%s) at +%v, waited %v, check %d: differs from the model:\n\tgot  %+v\n\twant %+v", formatChecks(checks), at, waited, i, got[i], want[i])
		}
	}
	return got
}

// giveBackTrace runs steps random Takes and give-backs on a store of h and
// on the Model, comparing every decision and report, and returns how many
// give-backs gave units back and how many gave none.
func giveBackTrace(t *testing.T, h Harness, seed uint64, steps int) (given, kept int) {
	rng := rand.New(rand.NewPCG(seed, 0x9b4e))
	clock := NewClock(Base)
	store := h.New(t, clock).(algorithms.GiveBacker)
	model := NewModel()
	specs := append(giveBackSpecs(),
		algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 7, Window: 1300 * time.Millisecond},
		algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 7, Window: 1300 * time.Millisecond},
		algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 7, Window: 1500 * time.Millisecond, Buckets: 3},
		algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 7, Window: time.Second, Burst: 4},
		algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 3, Window: 700 * time.Millisecond, Burst: 5},
		algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 3, Window: time.Second, MaxDelay: 2 * time.Second},
	)
	type taken struct {
		at     time.Duration
		checks []algorithms.Check
		ds     []algorithms.Decision
	}
	var past []taken
	at := time.Duration(0)
	for step := range steps {
		switch r := rng.IntN(10); {
		case r < 2:
			at -= time.Duration(rng.IntN(300)) * time.Millisecond // the clock steps back
		default:
			at += time.Duration(rng.IntN(700)) * time.Millisecond
		}
		if rng.IntN(3) > 0 || len(past) == 0 {
			var checks []algorithms.Check
			for range 1 + rng.IntN(2) {
				sp := specs[rng.IntN(len(specs))]
				checks = append(checks, algorithms.Check{Spec: sp, Key: fmt.Sprint("k", rng.IntN(2)), Cost: 1 + rng.Int64N(min(2, sp.Capacity()))})
			}
			checks = FitRepeats(checks)
			clock.Set(Base.Add(at))
			ds, err := store.Take(t.Context(), checks...)
			want, werr := model.TakeAt(Base.Add(at), checks...)
			if err != nil || werr != nil {
				t.Fatalf("seed %d step %d: Take(%s): %v, the model's %v", seed, step, formatChecks(checks), err, werr)
			}
			for i := range ds {
				if ds[i] != want[i] {
					t.Fatalf("seed %d step %d: Take(%s) at +%v, check %d:\n\tgot  %+v\n\twant %+v", seed, step, formatChecks(checks), at, i, ds[i], want[i])
				}
			}
			past = append(past, taken{at, checks, ds})
			continue
		}
		// Give back one of the last Takes, at most once; the caller's wait
		// is exact or off by up to a third of a second either way.
		k := len(past) - 1 - rng.IntN(min(len(past), 4))
		tk := past[k]
		past = append(past[:k], past[k+1:]...)
		waited := at - tk.at
		if rng.IntN(3) == 0 {
			waited += time.Duration(rng.IntN(667)-333) * time.Millisecond
		}
		waited = max(waited, 0)
		got := giveBackBoth(t, clock, store, model, at, waited, tk.checks, tk.ds)
		if t.Failed() {
			t.Fatalf("seed %d step %d: stopped at the first difference", seed, step)
		}
		for _, r := range got {
			if r.Given {
				given++
			} else {
				kept++
			}
		}
	}
	return given, kept
}
