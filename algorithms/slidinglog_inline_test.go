package algorithms_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// logPair drives a MemoryStore and the Model side by side on one clock,
// comparing every Decision and checking the store's tables after each call
// (algorithms.CheckHeld: a sliding_log key in line holds at most one
// event, the spilled logs are dense and each owned by its key).
type logPair struct {
	t   *testing.T
	s   *algorithms.MemoryStore
	m   *algotest.Model
	clk *algotest.Clock
	// companion, when set, rides along with every Take of one check, so
	// that it is decided by the steps of a Take of several checks rather
	// than by TakeOne.
	companion *algorithms.Check
}

func newLogPair(t *testing.T, opts ...algorithms.MemoryOption) *logPair {
	clk := algotest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	s := newMemoryStore(t, append([]algorithms.MemoryOption{algorithms.WithClock(clk)}, opts...)...)
	return &logPair{t: t, s: s, m: algotest.NewModel(), clk: clk}
}

// at sets the clock to d after the pair's start (earlier than it was, too).
func (lp *logPair) at(d time.Duration) {
	lp.clk.Set(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(d))
}

// take decides checks on both and returns the store's Decisions (with
// the companion's last, when there is one), or nil when both refuse the
// checks with an error.
func (lp *logPair) take(checks ...algorithms.Check) []algorithms.Decision {
	lp.t.Helper()
	if len(checks) == 1 && lp.companion != nil {
		checks = append(checks, *lp.companion)
	}
	var (
		got []algorithms.Decision
		err error
	)
	if len(checks) == 1 {
		var d algorithms.Decision
		d, err = lp.s.TakeOne(ctx, checks[0])
		got = []algorithms.Decision{d}
	} else {
		got, err = lp.s.Take(ctx, checks...)
	}
	want, werr := lp.m.TakeAt(lp.clk.Now(), checks...)
	if (err != nil) != (werr != nil) {
		lp.t.Fatalf("Take(%v): error %v, the Model's %v", checks, err, werr)
	}
	if err != nil {
		return nil
	}
	if !reflect.DeepEqual(got, want) {
		lp.t.Fatalf("at %v: Take(%v)\n got %+v\nwant %+v", lp.clk.Now(), checks, got, want)
	}
	algorithms.CheckHeld(lp.t, lp.s)
	return got
}

// takeAllowed is take, requiring the first check admitted.
func (lp *logPair) takeAllowed(checks ...algorithms.Check) []algorithms.Decision {
	lp.t.Helper()
	ds := lp.take(checks...)
	if ds == nil || !ds[0].Allowed {
		lp.t.Fatalf("at %v: Take(%v) denied: %+v", lp.clk.Now(), checks, ds[0])
	}
	return ds
}

func (lp *logPair) peek(checks ...algorithms.Check) {
	lp.t.Helper()
	got := make([]algorithms.Decision, len(checks))
	if err := lp.s.Peek(ctx, got, checks); err != nil {
		lp.t.Fatalf("Peek(%v): %v", checks, err)
	}
	want, err := lp.m.PeekAt(lp.clk.Now(), checks...)
	if err != nil {
		lp.t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		lp.t.Fatalf("at %v: Peek(%v)\n got %+v\nwant %+v", lp.clk.Now(), checks, got, want)
	}
	algorithms.CheckHeld(lp.t, lp.s)
}

// giveBack gives back the units of an admitted Take of checks (with the
// companion when take added it) that decided ds, waited after it.
func (lp *logPair) giveBack(checks []algorithms.Check, ds []algorithms.Decision, waited time.Duration) []algorithms.Refunded {
	lp.t.Helper()
	if len(checks) == 1 && lp.companion != nil {
		checks = append(checks, *lp.companion)
	}
	got := make([]algorithms.Refunded, len(checks))
	if err := lp.s.GiveBack(ctx, got, checks, ds, waited); err != nil {
		lp.t.Fatalf("GiveBack(%v): %v", checks, err)
	}
	want, err := lp.m.GiveBackAt(lp.clk.Now(), checks, ds, waited)
	if err != nil {
		lp.t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		lp.t.Fatalf("at %v: GiveBack(%v, %+v, %v)\n got %+v\nwant %+v", lp.clk.Now(), checks, ds, waited, got, want)
	}
	algorithms.CheckHeld(lp.t, lp.s)
	return got
}

// shape requires the store to hold c's key with events events, spilled
// or in line.
func (lp *logPair) shape(c algorithms.Check, events int, spilled bool) {
	lp.t.Helper()
	n, sp, held := algorithms.LogShape(lp.s, c)
	if !held || n != events || sp != spilled {
		lp.t.Fatalf("at %v: key %q: held %v, %d events, spilled %v; want held, %d events, spilled %v", lp.clk.Now(), c.Key, held, n, sp, events, spilled)
	}
}

// forgetDropped forgets in the Model the keys of checks that the store
// no longer holds (swept or evicted: with the clock gone forward since, a
// fresh key to both).
func (lp *logPair) forgetDropped(checks ...algorithms.Check) {
	lp.t.Helper()
	for _, c := range checks {
		if !algorithms.HoldsKey(lp.s, c) {
			if err := lp.m.Reset(c); err != nil {
				lp.t.Fatal(err)
			}
		}
	}
}

var logSpec = algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Second}

// TestSlidingLogInlineSpillFold takes a sliding_log key through every
// change of how the store holds it — none, one event in line, two spilled
// to a log of their own, one spilled (a commit forgot the other, a
// give-back took it), back in line (a give-back leaving none, a sweep),
// none — with costs above 1, the clock going
// back, peeks that must change nothing (one far ahead, after which an
// earlier Take still counts the event), and give-backs of an event in line
// and of a spilled one, through TakeOne and through the steps of a Take of
// several checks. Every Decision is the Model's, and the store holds the
// key as each step says.
func TestSlidingLogInlineSpillFold(t *testing.T) {
	for _, via := range []string{"TakeOne", "Take of several checks"} {
		t.Run(via, func(t *testing.T) {
			lp := newLogPair(t)
			var companion *algorithms.Check
			if via != "TakeOne" {
				companion = &algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: algorithms.MaxLimit, Window: time.Hour}, Key: "companion"}
			}
			lp.companion = companion
			k := func(cost int64) algorithms.Check { return algorithms.Check{Spec: logSpec, Key: "k", Cost: cost} }
			ms := time.Millisecond

			lp.peek(k(1))
			if _, _, held := algorithms.LogShape(lp.s, k(1)); held {
				t.Fatal("a Peek made the key")
			}
			lp.takeAllowed(k(2))
			lp.shape(k(1), 1, false)
			lp.takeAllowed(k(1)) // the same instant: one event of cost 3
			lp.shape(k(1), 1, false)

			// A peek far ahead, when the event has left the window, keeps it
			// for a Take at an earlier instant.
			lp.at(2500 * ms)
			lp.peek(k(5))
			lp.shape(k(1), 1, false)
			lp.at(300 * ms)
			lp.take(k(3)) // denied: 3 still counted
			lp.takeAllowed(k(2))
			lp.shape(k(1), 2, true)

			lp.at(400 * ms)
			lp.take(k(1)) // denied: full
			lp.peek(k(1))
			lp.shape(k(1), 2, true)
			lp.at(200 * ms) // back: decided at 300 ms
			lp.take(k(1))
			lp.shape(k(1), 2, true)

			// Both events leave the window at 1.3 s + 1 ns: the commit
			// forgets them, and the key stays spilled with one event.
			lp.at(1300*ms + 1)
			d9 := lp.takeAllowed(k(1))
			lp.shape(k(1), 1, true)
			lp.at(1200 * ms) // back: counted at 1.3 s + 1 ns
			d10 := lp.takeAllowed(k(2))
			lp.shape(k(1), 1, true)

			// A give-back down to cost 1 leaves it spilled (its next Take
			// makes no log); another, leaving none, folds it back in line.
			lp.at(1400 * ms)
			if r := lp.giveBack([]algorithms.Check{k(2)}, d10, 100*ms); !r[0].Given {
				t.Fatal("the give-back of 2 units of a spilled event gave nothing back")
			}
			lp.shape(k(1), 1, true)
			if r := lp.giveBack([]algorithms.Check{k(1)}, d9, 100*ms); !r[0].Given {
				t.Fatal("the give-back of the last unit, spilled, gave nothing back")
			}
			lp.shape(k(1), 0, false)
			lp.peek(k(5))

			// 0 → 1 → 2, then a give-back of the newer event leaves one,
			// spilled, which a sweep folds.
			lp.at(1500 * ms)
			lp.takeAllowed(k(2))
			lp.shape(k(1), 1, false)
			lp.at(1600 * ms)
			d := lp.takeAllowed(k(3))
			lp.shape(k(1), 2, true)
			lp.take(k(1)) // denied
			if r := lp.giveBack([]algorithms.Check{k(3)}, d, 0); !r[0].Given {
				t.Fatal("the give-back of a spilled event gave nothing back")
			}
			lp.shape(k(1), 1, true)
			if n := lp.s.Sweep(); n != 0 {
				t.Fatalf("Sweep dropped %d keys, want 0", n)
			}
			algorithms.CheckHeld(t, lp.s)
			lp.shape(k(1), 1, false)

			// A key repeated in one Take, in line and spilled.
			lp.companion = nil
			lp.at(1700 * ms)
			lp.takeAllowed(k(1), k(1))
			lp.shape(k(1), 2, true)
			lp.at(2800 * ms)
			lp.takeAllowed(k(2), k(2))
			lp.shape(k(1), 1, true)
			lp.take(k(1), k(1), k(1)) // denied at the third
			lp.takeAllowed(k(1))
			lp.shape(k(1), 1, true)

			// A sweep folds the key, not idle, back in line.
			lp.at(3000 * ms)
			if n := lp.s.Sweep(); n != 0 {
				t.Fatalf("Sweep dropped %d keys, want 0", n)
			}
			algorithms.CheckHeld(t, lp.s)
			lp.shape(k(1), 1, false)

			// The event in line (5 at 2.8 s) has left the window: the
			// whole limit is there, and the key stays in line.
			lp.companion = companion
			lp.at(3800*ms + 1)
			lp.peek(k(5))
			lp.takeAllowed(k(5))
			lp.shape(k(1), 1, false)
		})
	}
}

// TestSlidingLogSweepInlineAndSpilled sweeps a store holding sliding_log
// keys idle and in use, in line and spilled: it drops the idle ones of
// both kinds and keeps the others (the spilled logs left dense, each
// still its key's), folding back in line a spilled key down to one event,
// and every key decides afterwards as the Model does, the dropped ones as
// fresh.
func TestSlidingLogSweepInlineAndSpilled(t *testing.T) {
	lp := newLogPair(t)
	ms := time.Millisecond
	k := func(key string, cost int64) algorithms.Check {
		return algorithms.Check{Spec: logSpec, Key: key, Cost: cost}
	}
	keys := []algorithms.Check{k("idle-in-line", 1), k("idle-spilled", 1), k("spilled", 1), k("in-line", 1), k("spilled-2", 1)}

	lp.takeAllowed(k("idle-spilled", 2))
	lp.takeAllowed(k("idle-in-line", 3))
	lp.at(100 * ms)
	lp.takeAllowed(k("idle-spilled", 1))
	lp.takeAllowed(k("spilled", 1))
	lp.takeAllowed(k("spilled-2", 2))
	lp.at(700 * ms)
	lp.takeAllowed(k("spilled", 2))
	lp.takeAllowed(k("spilled-2", 3))
	lp.at(1050 * ms)
	lp.takeAllowed(k("in-line", 4))
	lp.shape(k("idle-spilled", 1), 2, true)
	lp.shape(k("spilled", 1), 2, true)

	lp.at(1100*ms + 1) // idle-spilled's and idle-in-line's events have left
	if n := lp.s.Sweep(); n != 2 {
		t.Fatalf("Sweep dropped %d keys, want 2", n)
	}
	algorithms.CheckHeld(t, lp.s)
	for _, c := range keys {
		if held, want := algorithms.HoldsKey(lp.s, c), c.Key != "idle-in-line" && c.Key != "idle-spilled"; held != want {
			t.Fatalf("after the sweep, key %q held %v, want %v", c.Key, held, want)
		}
	}
	lp.shape(k("spilled", 1), 2, true)
	lp.shape(k("spilled-2", 1), 2, true)
	lp.shape(k("in-line", 1), 1, false)
	lp.forgetDropped(keys...)
	for _, c := range keys {
		lp.peek(c)
		lp.take(k(c.Key, 2))
	}
	lp.at(2200 * ms) // spilled: both its events gone at its next Take
	for _, c := range keys {
		lp.take(c)
	}
	lp.shape(k("spilled", 1), 1, true)
	if n := lp.s.Sweep(); n != 0 {
		t.Fatalf("the second Sweep dropped %d keys, want 0", n)
	}
	algorithms.CheckHeld(t, lp.s)
	lp.shape(k("spilled", 1), 1, false) // folded
	for _, c := range keys {
		lp.peek(c)
		lp.take(c)
	}
}

// TestSlidingLogEvictInlineAndSpilled fills a store bounded to 4 keys
// with sliding_log keys in line and spilled, using different shares of
// the limit: each new key evicts the one using the least, a spilled one
// first and then one in line, and the store's logs stay dense, one per
// spilled key, while the keys it keeps decide as the Model does.
func TestSlidingLogEvictInlineAndSpilled(t *testing.T) {
	lp := newLogPair(t, algorithms.WithMaxKeys(4))
	ms := time.Millisecond
	k := func(key string, cost int64) algorithms.Check {
		return algorithms.Check{Spec: logSpec, Key: key, Cost: cost}
	}
	all := []algorithms.Check{k("spilled-2", 1), k("in-line-3", 1), k("in-line-5", 1), k("spilled-5", 1), k("new-4", 1), k("new-4b", 1)}

	lp.takeAllowed(k("spilled-2", 1))
	lp.takeAllowed(k("spilled-5", 3))
	lp.takeAllowed(k("in-line-3", 3))
	lp.takeAllowed(k("in-line-5", 5))
	lp.at(10 * ms)
	lp.takeAllowed(k("spilled-2", 1))
	lp.takeAllowed(k("spilled-5", 2))
	lp.shape(k("spilled-2", 1), 2, true)
	lp.shape(k("spilled-5", 1), 2, true)

	lp.at(20 * ms)
	lp.takeAllowed(k("new-4", 4)) // evicts spilled-2 (2 of 5)
	if algorithms.HoldsKey(lp.s, k("spilled-2", 1)) || lp.s.Len() != 4 {
		t.Fatalf("after a new key: spilled-2 held %v, Len %d; want it evicted, 4", algorithms.HoldsKey(lp.s, k("spilled-2", 1)), lp.s.Len())
	}
	lp.takeAllowed(k("new-4b", 4)) // evicts in-line-3 (3 of 5)
	if algorithms.HoldsKey(lp.s, k("in-line-3", 1)) || lp.s.Len() != 4 {
		t.Fatalf("after a second new key: in-line-3 held %v, Len %d; want it evicted, 4", algorithms.HoldsKey(lp.s, k("in-line-3", 1)), lp.s.Len())
	}
	lp.shape(k("spilled-5", 1), 2, true)
	lp.shape(k("in-line-5", 1), 1, false)
	lp.forgetDropped(all...)
	lp.at(30 * ms)
	for _, c := range []algorithms.Check{k("spilled-5", 1), k("in-line-5", 1), k("new-4", 1), k("new-4b", 2)} {
		lp.peek(c)
		lp.take(c)
	}
}

// TestSlidingLogTableFollowsModel drives a MemoryStore and the Model with
// the same random trace of sliding_log keys (three Specs, a fixed_window
// one beside them): Takes of one to six checks, often on one key
// repeated, single checks through TakeOne, Peeks, GiveBacks, Resets and
// Sweeps, under a key bound that evicts on most new keys, or none, with
// the clock going back now and then where the store drops no key (no
// bound, fewer keys in the shard than its first sweep waits for). Keys go back and forth between one
// event in line and several spilled. Each Decision and Refunded must be
// the Model's; the keys the store evicted or swept are forgotten in the
// Model after each call; the store's tables are checked after each call.
func TestSlidingLogTableFollowsModel(t *testing.T) {
	specs := []algorithms.Spec{
		{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Second},
		{Algorithm: algorithms.SlidingLog, Limit: 9, Window: 700 * time.Millisecond},
		{Algorithm: algorithms.SlidingLog, Limit: 2, Window: 300 * time.Millisecond},
		{Algorithm: algorithms.FixedWindow, Limit: 4, Window: time.Second},
	}
	for _, cf := range []struct {
		bound, keys int
		back        bool
		seed        uint64
	}{{0, 40, false, 1}, {0, 400, false, 2}, {6, 30, false, 3}, {12, 40, false, 4}, {3, 12, false, 5}, {0, 1500, false, 6}, {700, 1500, false, 7}, {0, 20, true, 8}, {0, 100, true, 9}} {
		t.Run(fmt.Sprintf("bound=%d/keys=%d/back=%v", cf.bound, cf.keys, cf.back), func(t *testing.T) {
			var opts []algorithms.MemoryOption
			if cf.bound > 0 {
				opts = append(opts, algorithms.WithMaxKeys(cf.bound))
			}
			lp := newLogPair(t, opts...)
			s := lp.s
			rng := rand.New(rand.NewPCG(cf.seed, 34))
			keys := algorithms.KeysInShard(s, 0, cf.keys)
			keys = append(keys, "elsewhere-a", "elsewhere-b")
			seen := map[algorithms.Check]bool{}
			check := func() algorithms.Check {
				c := algorithms.Check{Spec: specs[rng.IntN(len(specs))], Key: keys[rng.IntN(len(keys))], Cost: int64(1 + rng.IntN(2))}
				seen[algorithms.Check{Spec: c.Spec, Key: c.Key}] = true
				return c
			}
			spilled := 0
			for step := range 2500 {
				if cf.back && rng.IntN(8) == 0 {
					lp.clk.Set(lp.clk.Now().Add(-time.Duration(rng.IntN(400)) * time.Millisecond))
				} else {
					lp.clk.Advance(time.Duration(rng.IntN(150)) * time.Millisecond)
				}
				var checks []algorithms.Check
				if rng.IntN(10) < 4 {
					checks = []algorithms.Check{check()}
				} else {
					for range 2 + rng.IntN(5) {
						if len(checks) > 0 && rng.IntN(4) == 0 {
							checks = append(checks, checks[rng.IntN(len(checks))])
							continue
						}
						checks = append(checks, check())
					}
				}
				got := lp.take(checks...)
				if got == nil {
					continue
				}
				switch g := rng.IntN(20); {
				case g < 3 && allowed(got):
					waited := time.Duration(rng.IntN(50)) * time.Millisecond
					lp.clk.Advance(waited)
					lp.giveBack(checks, got, waited)
				case g < 5:
					lp.peek(checks...)
				case g < 6:
					c := checks[0]
					if err := s.Reset(ctx, c); err != nil {
						t.Fatalf("step %d: Reset: %v", step, err)
					}
					if err := lp.m.Reset(c); err != nil {
						t.Fatal(err)
					}
				case g < 7 && !cf.back:
					s.Sweep()
				}
				for c := range seen {
					if c.Spec.Algorithm == algorithms.SlidingLog {
						if _, sp, _ := algorithms.LogShape(s, c); sp {
							spilled++
						}
					}
				}
				if !cf.back {
					for c := range seen {
						if !algorithms.HoldsKey(s, c) {
							lp.forgetDropped(c)
							delete(seen, c)
						}
					}
				}
			}
			if spilled == 0 {
				t.Fatal("no key was ever spilled")
			}
		})
	}
}
