package algotest

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// runRefund checks [algorithms.Refunder] on a queue of one departure per
// second: a refunded last place is given to the next arrival, a place with
// requests queued behind it is kept, and nothing but leaky_queue places
// comes back.
func runRefund(t *testing.T, h Harness) {
	if _, ok := h.New(t, NewClock(Base)).(algorithms.Refunder); !ok {
		t.Skip("the store does not implement algorithms.Refunder")
	}
	queue := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 10 * time.Second}
	q := func(key string, cost int64) algorithms.Check {
		return algorithms.Check{Spec: queue, Key: key, Cost: cost}
	}

	// r is a store at Base, with the helpers of one scenario.
	type r struct {
		t     *testing.T
		clock *Clock
		store algorithms.Refunder
	}
	newR := func(t *testing.T) *r {
		clock := NewClock(Base)
		return &r{t, clock, h.New(t, clock).(algorithms.Refunder)}
	}
	take := func(e *r, at time.Duration, checks ...algorithms.Check) []algorithms.Decision {
		e.t.Helper()
		e.clock.Set(Base.Add(at))
		ds, err := e.store.Take(e.t.Context(), checks...)
		if err != nil {
			e.t.Fatalf("Take(%s) at +%v: %v", formatChecks(checks), at, err)
		}
		return ds
	}
	// refund refunds at Base+at a Take made at Base+took.
	refund := func(e *r, took, at time.Duration, checks []algorithms.Check, ds []algorithms.Decision) {
		e.t.Helper()
		e.clock.Set(Base.Add(at))
		if err := e.store.Refund(e.t.Context(), checks, ds, at-took); err != nil {
			e.t.Fatalf("Refund(%s) at +%v: %v", formatChecks(checks), at, err)
		}
	}
	// delay takes one unit of key at Base+at and returns its Delay.
	delay := func(e *r, at time.Duration, key string) time.Duration {
		e.t.Helper()
		d := take(e, at, q(key, 1))[0]
		if !d.Allowed {
			e.t.Fatalf("queue %q at +%v: denied (%+v)", key, at, d)
		}
		return d.Delay
	}
	want := func(e *r, what string, got, want time.Duration) {
		e.t.Helper()
		if got != want {
			e.t.Errorf("%s: Delay %v, want %v", what, got, want)
		}
	}
	queueOf := func(e *r, n int) ([][]algorithms.Check, [][]algorithms.Decision) {
		var cs [][]algorithms.Check
		var ds [][]algorithms.Decision
		for range n {
			c := []algorithms.Check{q("k", 1)}
			cs, ds = append(cs, c), append(ds, take(e, 0, c...))
		}
		return cs, ds
	}
	const ms = time.Millisecond

	t.Run("last_place", func(t *testing.T) {
		e := newR(t)
		cs, ds := queueOf(e, 3) // departures at 0, 1 s and 2 s
		refund(e, 0, 500*ms, cs[2], ds[2])
		want(e, "the next arrival after the last place was refunded", delay(e, 500*ms, "k"), 1500*ms)
		want(e, "the one after it", delay(e, 500*ms, "k"), 2500*ms)
	})
	t.Run("place_with_requests_behind", func(t *testing.T) {
		e := newR(t)
		cs, ds := queueOf(e, 3)
		refund(e, 0, 500*ms, cs[1], ds[1])
		want(e, "the next arrival after a middle place was refunded", delay(e, 500*ms, "k"), 2500*ms)
	})
	// The caller's clock and the store's may disagree about the wait by
	// less than half a spacing (here 0.5 s) and the rule holds.
	t.Run("caller_clock_ahead", func(t *testing.T) {
		e := newR(t)
		cs, ds := queueOf(e, 3)
		e.clock.Set(Base.Add(500 * ms))
		if err := e.store.Refund(t.Context(), cs[2], ds[2], 900*ms); err != nil {
			t.Fatal(err)
		}
		want(e, "the next arrival after refunding the last place, the caller's clock 400 ms ahead", delay(e, 500*ms, "k"), 1500*ms)
	})
	t.Run("caller_clock_behind", func(t *testing.T) {
		e := newR(t)
		cs, ds := queueOf(e, 3)
		e.clock.Set(Base.Add(500 * ms))
		if err := e.store.Refund(t.Context(), cs[1], ds[1], 100*ms); err != nil {
			t.Fatal(err)
		}
		want(e, "the next arrival after refunding a middle place, the caller's clock 400 ms behind", delay(e, 500*ms, "k"), 2500*ms)
	})
	t.Run("chain", func(t *testing.T) {
		e := newR(t)
		cs, ds := queueOf(e, 3)
		refund(e, 0, 500*ms, cs[2], ds[2])
		refund(e, 0, 600*ms, cs[1], ds[1]) // now the last place
		want(e, "the next arrival after the last two places were refunded", delay(e, 600*ms, "k"), 400*ms)
	})
	t.Run("place_partly_gone", func(t *testing.T) {
		e := newR(t)
		cs, ds := queueOf(e, 1) // departs at once, holds the queue for 1 s
		refund(e, 0, 300*ms, cs[0], ds[0])
		want(e, "the next arrival after a refund 300 ms into the place", delay(e, 300*ms, "k"), 0)
		want(e, "the one after it", delay(e, 300*ms, "k"), time.Second)
	})
	// A refund that empties the queue leaves it free from the refund's
	// instant, not from before: a request from a clock a little behind
	// (app hosts that disagree) waits until then, since the part of the
	// place that had gone by was the refunded request's.
	t.Run("emptied_then_clock_behind", func(t *testing.T) {
		e := newR(t)
		cs, ds := queueOf(e, 1)
		refund(e, 0, 300*ms, cs[0], ds[0])
		want(e, "an arrival at +200ms after a refund at +300ms emptied the queue", delay(e, 200*ms, "k"), 100*ms)
	})
	t.Run("place_gone", func(t *testing.T) {
		e := newR(t)
		cs, ds := queueOf(e, 2)
		refund(e, 0, 1500*ms, cs[0], ds[0]) // its place ended at 1 s
		want(e, "the next arrival after refunding a place that has gone by", delay(e, 1500*ms, "k"), 500*ms)
	})
	t.Run("cost", func(t *testing.T) {
		e := newR(t)
		take(e, 0, q("k", 1))
		c := []algorithms.Check{q("k", 3)} // departs at 1 s, holds the queue until 4 s
		ds := take(e, 0, c...)
		refund(e, 0, 200*ms, c, ds)
		want(e, "the next arrival after a refund of cost 3", delay(e, 200*ms, "k"), 800*ms)
	})
	t.Run("one_take_two_places", func(t *testing.T) {
		e := newR(t)
		take(e, 0, q("k", 1))
		c := []algorithms.Check{q("k", 1), q("k", 1)} // departures at 1 s and 2 s
		ds := take(e, 0, c...)
		refund(e, 0, 100*ms, c, ds)
		want(e, "the next arrival after a Take's two places were refunded", delay(e, 100*ms, "k"), 900*ms)
	})
	t.Run("two_keys", func(t *testing.T) {
		e := newR(t)
		take(e, 0, q("a", 1), q("a", 1)) // departures at 0 and 1 s
		c := []algorithms.Check{q("a", 1), q("b", 1)}
		ds := take(e, 0, c...) // a at 2 s, b at once
		refund(e, 0, 100*ms, c, ds)
		want(e, "a after the refund", delay(e, 100*ms, "a"), 1900*ms)
		want(e, "b after the refund", delay(e, 100*ms, "b"), 0)
	})
	t.Run("other_kinds_kept", func(t *testing.T) {
		e := newR(t)
		fixed := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 2, Window: time.Minute}, Key: "k"}
		c := []algorithms.Check{fixed, q("k", 1)}
		ds := take(e, 0, c...)
		refund(e, 0, 100*ms, c, ds)
		if d := take(e, 100*ms, fixed)[0]; !d.Allowed || d.Remaining != 0 {
			t.Errorf("fixed_window after the refund: %+v, want allowed with Remaining 0 (its unit kept)", d)
		}
		want(e, "the queue after the refund", delay(e, 100*ms, "k"), 0)
	})
	t.Run("denied_take", func(t *testing.T) {
		e := newR(t)
		take(e, 0, q("k", 1))
		full := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Minute}, Key: "f"}
		take(e, 0, full)
		c := []algorithms.Check{full, q("k", 1)}
		ds := take(e, 0, c...) // denied by full: the queue place is not taken
		if ds[0].Allowed {
			t.Fatalf("the full fixed_window admitted: %+v", ds[0])
		}
		refund(e, 0, 100*ms, c, ds)
		want(e, "the queue after refunding a denied Take", delay(e, 100*ms, "k"), 900*ms)
	})
	t.Run("other_key", func(t *testing.T) {
		e := newR(t)
		_, ds := queueOf(e, 2)
		other := []algorithms.Check{q("other", 1)}
		refund(e, 0, 100*ms, other, []algorithms.Decision{{Allowed: true, Delay: 0}})
		refund(e, 0, 100*ms, other, ds[1]) // a key never seen
		want(e, "k after refunds on another key", delay(e, 100*ms, "k"), 1900*ms)
	})
	// Exact arithmetic: spacings W/L that are not whole nanoseconds, and
	// products (N−t)·L far beyond 2^53 (a remote store's wide values).
	for _, tc := range []struct {
		spec algorithms.Spec
		cost int64
	}{
		{algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 7, Window: time.Second, MaxDelay: time.Hour}, 1},
		{algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 999_999_999, Window: 24 * time.Hour, MaxDelay: time.Hour}, 1},
		{algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 999_999_999, Window: 24 * time.Hour, MaxDelay: time.Hour}, 1000},
	} {
		sp := tc.spec
		t.Run(fmt.Sprintf("exact/L=%d,W=%v,cost=%d", sp.Limit, sp.Window, tc.cost), func(t *testing.T) {
			e := newR(t)
			c := []algorithms.Check{{Spec: sp, Key: "k", Cost: tc.cost}}
			var ds []algorithms.Decision
			for range 3 {
				ds = take(e, 0, c...)
			}
			const at = time.Microsecond
			refund(e, 0, at, c, ds)
			// The third place began at 2·n·W/L; the next arrival, 1 µs in,
			// waits ceil(2·n·W/L) − 1 µs.
			w := new(big.Int).Mul(big.NewInt(2*tc.cost), big.NewInt(int64(sp.Window)))
			w.Add(w, big.NewInt(sp.Limit-1))
			wantDelay := time.Duration(w.Quo(w, big.NewInt(sp.Limit)).Int64()) - at
			e.clock.Set(Base.Add(at))
			got, err := e.store.Take(t.Context(), c...)
			if err != nil {
				t.Fatal(err)
			}
			want(e, "the next arrival after the last place was refunded", got[0].Delay, wantDelay)
		})
	}
	// A negative wait (a caller's wall clock stepped back) would make the
	// store reckon the departure later than it is, and take a middle place
	// for the last: it is an error, and nothing comes back.
	t.Run("negative_waited", func(t *testing.T) {
		e := newR(t)
		cs, ds := queueOf(e, 3)
		if err := e.store.Refund(t.Context(), cs[1], ds[1], -time.Second); err == nil {
			t.Error("Refund with waited -1s: no error")
		}
		want(e, "the next arrival after a refund with a negative wait", delay(e, 0, "k"), 3*time.Second)
	})
	// Refunds concurrent with Takes on one queue, at one frozen instant:
	// the places kept by requests that go ahead never share a departure
	// (a refund gives back only a last place, whatever interleaving), and
	// the queue's next departure is after all of them.
	t.Run("concurrent", func(t *testing.T) {
		e := newR(t)
		big := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: time.Hour}
		c := []algorithms.Check{{Spec: big, Key: "k"}}
		const workers, each = 16, 25
		var mu sync.Mutex
		var kept []time.Duration
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(w), 7))
				for range each {
					ds, err := e.store.Take(t.Context(), c...)
					if err != nil {
						errs <- err
						return
					}
					if !ds[0].Allowed {
						errs <- fmt.Errorf("Take denied: %+v", ds[0])
						return
					}
					if r.IntN(2) == 0 {
						if err := e.store.Refund(t.Context(), c, ds, 0); err != nil {
							errs <- err
							return
						}
						continue
					}
					mu.Lock()
					kept = append(kept, ds[0].Delay)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		slices.Sort(kept)
		for i := 1; i < len(kept); i++ {
			if kept[i] == kept[i-1] {
				t.Fatalf("two requests that go ahead depart together, after %v (%d places kept)", kept[i], len(kept))
			}
		}
		if next := take(e, 0, c...)[0].Delay; len(kept) > 0 && next <= kept[len(kept)-1] {
			t.Errorf("the next arrival departs after %v, not after every kept place (the last after %v)", next, kept[len(kept)-1])
		}
	})
	// An invalid check is an error of the whole Refund, which then gives
	// nothing back (as Take decides nothing).
	t.Run("invalid_check", func(t *testing.T) {
		for _, bad := range []algorithms.Check{
			q("k", queue.Capacity()+1),
			q("k", -1),
			{Spec: algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: -1}, Key: "k"},
		} {
			e := newR(t)
			_, ds := queueOf(e, 3)
			checks := []algorithms.Check{bad, q("k", 1)}
			both := []algorithms.Decision{ds[2][0], ds[2][0]}
			e.clock.Set(Base.Add(100 * ms))
			if err := e.store.Refund(t.Context(), checks, both, 100*ms); err == nil {
				t.Errorf("Refund(%s): no error", formatChecks(checks))
			}
			want(e, fmt.Sprintf("the next arrival after Refund(%s) failed", formatChecks(checks)), delay(e, 100*ms, "k"), 2900*ms)
		}
	})
	// A caller may state the remaining wait in Delay itself, negative once
	// the departure has passed, with waited 0 (algorithms.Limiter.RefundN):
	// a place that departed 1.5 s ago with a later one behind it is kept.
	t.Run("negative_delay", func(t *testing.T) {
		e := newR(t)
		cs, _ := queueOf(e, 3) // departures at 0, 1 s and 2 s
		left := []algorithms.Decision{{Allowed: true, Delay: -1500 * ms}}
		refund(e, 2500*ms, 2500*ms, cs[1], left)
		want(e, "the next arrival after refunding a middle place gone by 1.5 s", delay(e, 2500*ms, "k"), 500*ms)
	})
	t.Run("mismatched_lengths", func(t *testing.T) {
		e := newR(t)
		if err := e.store.Refund(t.Context(), []algorithms.Check{q("k", 1)}, nil, 0); err == nil {
			t.Error("Refund with 0 decisions for 1 check: no error")
		}
	})
}
