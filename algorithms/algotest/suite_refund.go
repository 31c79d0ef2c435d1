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
// comes back. Every Take and every Refund is also made on the [Model]:
// the Takes' decisions, and what each Refund reports of each check (the
// key as it stands after it, whether its place came back), must be the
// Model's.
func runRefund(t *testing.T, h Harness) {
	if _, ok := h.New(t, NewClock(Base)).(algorithms.Refunder); !ok {
		t.Skip("the store does not implement algorithms.Refunder")
	}
	queue := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: 10 * time.Second}
	q := func(key string, cost int64) algorithms.Check {
		return algorithms.Check{Spec: queue, Key: key, Cost: cost}
	}

	// r is a store at Base and the Model beside it, with the helpers of
	// one scenario.
	type r struct {
		t     *testing.T
		clock *Clock
		store algorithms.Refunder
		model *Model
	}
	newR := func(t *testing.T) *r {
		clock := NewClock(Base)
		return &r{t, clock, h.New(t, clock).(algorithms.Refunder), NewModel()}
	}
	take := func(e *r, at time.Duration, checks ...algorithms.Check) []algorithms.Decision {
		e.t.Helper()
		e.clock.Set(Base.Add(at))
		ds, err := e.store.Take(e.t.Context(), checks...)
		if err != nil {
			e.t.Fatalf("Take(%s) at +%v: %v", formatChecks(checks), at, err)
		}
		want, err := e.model.TakeAt(Base.Add(at), checks...)
		if err != nil {
			e.t.Fatalf("model: Take(%s) at +%v: %v", formatChecks(checks), at, err)
		}
		for i := range ds {
			if ds[i] != want[i] {
				e.t.Errorf("Take(%s) at +%v, check %d: decisions differ from the model:\n\tgot  %+v\n\twant %+v", formatChecks(checks), at, i, ds[i], want[i])
			}
		}
		return ds
	}
	// refundAt refunds at Base+at, after waited, on the store and on the
	// Model: their errors must agree (the model's is returned), and what
	// the store reports of each check must be what the Model reports.
	refundAt := func(e *r, at, waited time.Duration, checks []algorithms.Check, ds []algorithms.Decision) ([]algorithms.Refunded, error) {
		e.t.Helper()
		e.clock.Set(Base.Add(at))
		got := make([]algorithms.Refunded, len(checks))
		err := e.store.Refund(e.t.Context(), got, checks, ds, waited)
		want, werr := e.model.RefundAt(Base.Add(at), checks, ds, waited)
		if (err == nil) != (werr == nil) {
			e.t.Fatalf("Refund(%s) at +%v, waited %v: error %v, the model's %v", formatChecks(checks), at, waited, err, werr)
		}
		if werr != nil {
			return nil, err
		}
		for i := range got {
			if got[i] != want[i] {
				e.t.Errorf("Refund(%s) at +%v, waited %v, check %d: differs from the model:\n\tgot  %+v\n\twant %+v", formatChecks(checks), at, waited, i, got[i], want[i])
			}
		}
		return got, nil
	}
	// refund refunds at Base+at a Take made at Base+took.
	refund := func(e *r, took, at time.Duration, checks []algorithms.Check, ds []algorithms.Decision) []algorithms.Refunded {
		e.t.Helper()
		got, err := refundAt(e, at, at-took, checks, ds)
		if err != nil {
			e.t.Fatalf("Refund(%s) at +%v: %v", formatChecks(checks), at, err)
		}
		return got
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
	// wantRefunded checks what a Refund reported of one check, besides
	// the Model's agreement: the figures a scenario states.
	wantRefunded := func(e *r, what string, got, want algorithms.Refunded) {
		e.t.Helper()
		if got != want {
			e.t.Errorf("%s: reported %+v, want %+v", what, got, want)
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
	// look is the Decision a fresh look at the queue (1/s, MaxDelay 10 s,
	// capacity 11) reports when it is free after free: Remaining the unit
	// requests it admits, NextAfter the wait for one more.
	look := func(free time.Duration) algorithms.Decision {
		d := algorithms.Decision{Allowed: free <= 10*time.Second, Limit: 11, ResetAfter: max(free, 0)}
		if !d.Allowed {
			d.RetryAfter = free - 10*time.Second
		}
		if free <= 0 {
			d.Remaining = 11
			return d
		}
		if d.Allowed {
			d.Remaining = int64((10*time.Second-free)/time.Second) + 1
		}
		// Remaining grows when free−w ≤ 10 s − Remaining·1 s.
		d.NextAfter = free - (10*time.Second - time.Duration(d.Remaining)*time.Second)
		return d
	}

	t.Run("last_place", func(t *testing.T) {
		e := newR(t)
		cs, ds := queueOf(e, 3) // departures at 0, 1 s and 2 s
		got := refund(e, 0, 500*ms, cs[2], ds[2])
		wantRefunded(e, "the last place", got[0], algorithms.Refunded{Decision: look(1500 * ms), Given: true})
		want(e, "the next arrival after the last place was refunded", delay(e, 500*ms, "k"), 1500*ms)
		want(e, "the one after it", delay(e, 500*ms, "k"), 2500*ms)
	})
	t.Run("place_with_requests_behind", func(t *testing.T) {
		e := newR(t)
		cs, ds := queueOf(e, 3)
		got := refund(e, 0, 500*ms, cs[1], ds[1])
		// Kept: the queue still holds both later places, free in 2.5 s.
		wantRefunded(e, "a place with one queued behind it", got[0], algorithms.Refunded{Decision: look(2500 * ms)})
		want(e, "the next arrival after a middle place was refunded", delay(e, 500*ms, "k"), 2500*ms)
	})
	// The caller's clock and the store's may disagree about the wait by
	// less than half a spacing (here 0.5 s) and the rule holds.
	t.Run("caller_clock_ahead", func(t *testing.T) {
		e := newR(t)
		cs, ds := queueOf(e, 3)
		got, err := refundAt(e, 500*ms, 900*ms, cs[2], ds[2])
		if err != nil {
			t.Fatal(err)
		}
		wantRefunded(e, "the last place, the caller's clock ahead", got[0], algorithms.Refunded{Decision: look(1500 * ms), Given: true})
		want(e, "the next arrival after refunding the last place, the caller's clock 400 ms ahead", delay(e, 500*ms, "k"), 1500*ms)
	})
	t.Run("caller_clock_behind", func(t *testing.T) {
		e := newR(t)
		cs, ds := queueOf(e, 3)
		got, err := refundAt(e, 500*ms, 100*ms, cs[1], ds[1])
		if err != nil {
			t.Fatal(err)
		}
		wantRefunded(e, "a middle place, the caller's clock behind", got[0], algorithms.Refunded{Decision: look(2500 * ms)})
		want(e, "the next arrival after refunding a middle place, the caller's clock 400 ms behind", delay(e, 500*ms, "k"), 2500*ms)
	})
	t.Run("chain", func(t *testing.T) {
		e := newR(t)
		cs, ds := queueOf(e, 3)
		refund(e, 0, 500*ms, cs[2], ds[2])
		got := refund(e, 0, 600*ms, cs[1], ds[1]) // now the last place
		wantRefunded(e, "the second place, the last after the third's refund", got[0], algorithms.Refunded{Decision: look(400 * ms), Given: true})
		want(e, "the next arrival after the last two places were refunded", delay(e, 600*ms, "k"), 400*ms)
	})
	t.Run("place_partly_gone", func(t *testing.T) {
		e := newR(t)
		cs, ds := queueOf(e, 1) // departs at once, holds the queue for 1 s
		got := refund(e, 0, 300*ms, cs[0], ds[0])
		wantRefunded(e, "a place partly gone", got[0], algorithms.Refunded{Decision: look(0), Given: true})
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
		got := refund(e, 0, 200*ms, c, ds)
		wantRefunded(e, "the last place, of cost 3", got[0], algorithms.Refunded{Decision: look(800 * ms), Given: true})
		want(e, "the next arrival after a refund of cost 3", delay(e, 200*ms, "k"), 800*ms)
	})
	// A place of cost 2 with a request queued behind it is kept: the
	// Refund reports the queue with every place still taken.
	t.Run("cost_place_kept", func(t *testing.T) {
		e := newR(t)
		take(e, 0, q("k", 1))
		c := []algorithms.Check{q("k", 2)} // departs at 1 s, holds the queue until 3 s
		ds := take(e, 0, c...)
		take(e, 0, q("k", 1)) // queued behind it: the queue is free at 4 s
		got := refund(e, 0, 100*ms, c, ds)
		wantRefunded(e, "a place of cost 2 with one queued behind it", got[0], algorithms.Refunded{Decision: look(3900 * ms)})
		want(e, "the next arrival after it was kept", delay(e, 100*ms, "k"), 3900*ms)
	})
	// A queue fuller after the refund than the Take left it (later
	// requests queued, the place kept): the look reports it full, denying.
	t.Run("kept_queue_full", func(t *testing.T) {
		e := newR(t)
		cs, ds := queueOf(e, 2) // departures at 0 and 1 s
		for range 9 {
			take(e, 0, q("k", 1)) // the queue is full: free at 11 s
		}
		got := refund(e, 0, 100*ms, cs[1], ds[1])
		wantRefunded(e, "a place kept in a full queue", got[0], algorithms.Refunded{Decision: look(10900 * ms)})
		if got[0].Allowed || got[0].Remaining != 0 || got[0].RetryAfter != 900*ms {
			t.Errorf("the full queue after the refund: %+v, want denied, Remaining 0, RetryAfter 900ms", got[0])
		}
	})
	t.Run("one_take_two_places", func(t *testing.T) {
		e := newR(t)
		take(e, 0, q("k", 1))
		c := []algorithms.Check{q("k", 1), q("k", 1)} // departures at 1 s and 2 s
		ds := take(e, 0, c...)
		got := refund(e, 0, 100*ms, c, ds)
		// Both report the queue after both refunds.
		for i := range got {
			wantRefunded(e, fmt.Sprintf("place %d of one Take", i), got[i], algorithms.Refunded{Decision: look(900 * ms), Given: true})
		}
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
		got := refund(e, 0, 100*ms, c, ds)
		wantRefunded(e, "the fixed_window check", got[0], algorithms.Refunded{Decision: ds[0]})
		wantRefunded(e, "the queue check", got[1], algorithms.Refunded{Decision: look(0), Given: true})
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
		got := refund(e, 0, 100*ms, c, ds)
		wantRefunded(e, "the denying check", got[0], algorithms.Refunded{Decision: ds[0]})
		wantRefunded(e, "the queue check of a denied Take", got[1], algorithms.Refunded{Decision: look(900 * ms)})
		want(e, "the queue after refunding a denied Take", delay(e, 100*ms, "k"), 900*ms)
	})
	t.Run("other_key", func(t *testing.T) {
		e := newR(t)
		_, ds := queueOf(e, 2)
		other := []algorithms.Check{q("other", 1)}
		got := refund(e, 0, 100*ms, other, []algorithms.Decision{{Allowed: true, Delay: 0}})
		wantRefunded(e, "a key never seen", got[0], algorithms.Refunded{Decision: look(0)})
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
			if got := refund(e, 0, at, c, ds); !got[0].Given {
				t.Errorf("the last place: kept (%+v)", got[0])
			}
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
	// Random Takes and Refunds on queues whose spacings are not whole
	// nanoseconds, costs above 1, two keys, refunds at any point of their
	// Take's wait with the caller's wait off by up to a spacing, and an
	// instant that sometimes goes back: every decision and every report
	// is the Model's.
	t.Run("model_traces", func(t *testing.T) {
		specs := []algorithms.Spec{
			{Algorithm: algorithms.LeakyQueue, Limit: 3, Window: time.Second, MaxDelay: 2 * time.Second},
			{Algorithm: algorithms.LeakyQueue, Limit: 7, Window: 100 * time.Millisecond, MaxDelay: 50 * time.Millisecond},
			{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Second},
		}
		for seed := range uint64(4) {
			t.Run(fmt.Sprint(seed), func(t *testing.T) {
				e := newR(t)
				rnd := rand.New(rand.NewPCG(seed, 99))
				type taken struct {
					at     time.Duration
					checks []algorithms.Check
					ds     []algorithms.Decision
				}
				var admitted []taken
				at := time.Duration(0)
				for range 300 {
					at += time.Duration(rnd.Int64N(int64(150*ms))) - 10*ms
					if len(admitted) > 0 && rnd.IntN(3) == 0 {
						j := rnd.IntN(len(admitted))
						tk := admitted[j]
						admitted = append(admitted[:j], admitted[j+1:]...)
						waited := max(0, at-tk.at+time.Duration(rnd.Int64N(int64(200*ms)))-100*ms)
						if _, err := refundAt(e, at, waited, tk.checks, tk.ds); err != nil {
							t.Fatal(err)
						}
						continue
					}
					var checks []algorithms.Check
					for range 1 + rnd.IntN(2) {
						sp := specs[rnd.IntN(len(specs))]
						checks = append(checks, algorithms.Check{Spec: sp, Key: []string{"a", "b"}[rnd.IntN(2)], Cost: 1 + rnd.Int64N(min(3, sp.Capacity()))})
					}
					checks = FitRepeats(checks)
					ds := take(e, at, checks...)
					allowed := true
					for _, d := range ds {
						allowed = allowed && d.Allowed
					}
					if allowed || rnd.IntN(4) == 0 {
						admitted = append(admitted, taken{at, checks, ds})
					}
				}
			})
		}
	})
	// A negative wait (a caller's wall clock stepped back) would make the
	// store reckon the departure later than it is, and take a middle place
	// for the last: it is an error, and nothing comes back.
	t.Run("negative_waited", func(t *testing.T) {
		e := newR(t)
		cs, ds := queueOf(e, 3)
		if _, err := refundAt(e, 0, -time.Second, cs[1], ds[1]); err == nil {
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
						if err := e.store.Refund(t.Context(), make([]algorithms.Refunded, 1), c, ds, 0); err != nil {
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
		// The Model saw none of the calls: the store alone.
		e.clock.Set(Base)
		ds, err := e.store.Take(t.Context(), c...)
		if err != nil {
			t.Fatal(err)
		}
		if next := ds[0].Delay; len(kept) > 0 && next <= kept[len(kept)-1] {
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
			if _, err := refundAt(e, 100*ms, 100*ms, checks, both); err == nil {
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
		got := refund(e, 2500*ms, 2500*ms, cs[1], left)
		wantRefunded(e, "a middle place gone by", got[0], algorithms.Refunded{Decision: look(500 * ms)})
		want(e, "the next arrival after refunding a middle place gone by 1.5 s", delay(e, 2500*ms, "k"), 500*ms)
	})
	t.Run("mismatched_lengths", func(t *testing.T) {
		e := newR(t)
		one := []algorithms.Check{q("k", 1)}
		if err := e.store.Refund(t.Context(), make([]algorithms.Refunded, 1), one, nil, 0); err == nil {
			t.Error("Refund with 0 decisions for 1 check: no error")
		}
		if err := e.store.Refund(t.Context(), nil, one, []algorithms.Decision{{Allowed: true}}, 0); err == nil {
			t.Error("Refund with 0 results for 1 check: no error")
		}
	})
}
