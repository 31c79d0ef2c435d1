package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// TestRefundMatchesMemoryStore replays random traces of Takes and Refunds
// on the in-memory store, on Redis and on the reference Model
// (algotest.Model.RefundAt) with the same clock, and requires every later
// Decision to match, and what each Refund reports of each check (the key
// after the refund, whether its place came back) to be the Model's: a
// refund that left the two stores' queues in different states shows in
// the next decisions. The refunds come at
// random points of their Take's wait (before, at and after its departure),
// with the caller's wait measured exactly or off by up to a spacing, and
// the clock sometimes goes back. Even seeds run through the function
// library, odd ones through the script fallback, and every fourth on the
// cluster. Over all seeds the traces must have kept places (a later
// request queued behind) and given back places of cost above 1.
func TestRefundMatchesMemoryStore(t *testing.T) {
	var kept, givenCost atomic.Int64
	replayTraces(t, 4242, func(t *testing.T, r *rand.Rand, clk *manualClock, mem *algorithms.MemoryStore, rs *redisstore.Store) {
		model := algotest.NewModel()
		// Mostly queues, sometimes a small one (one departure per
		// 100 ms, so refunds are often of the last place), and one
		// other kind.
		var specs []algorithms.Spec
		for range 2 {
			specs = append(specs, randomSpec(r, algorithms.LeakyQueue))
		}
		specs = append(specs,
			algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: time.Second, MaxDelay: time.Second},
			algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 3, Window: 7 * time.Millisecond, MaxDelay: 20 * time.Millisecond},
			randomSpec(r, algorithms.Kinds[r.IntN(len(algorithms.Kinds))]))
		keys := []string{"a", "b", "{x}:y"}
		ctx := context.Background()
		type taken struct {
			at     time.Time
			checks []algorithms.Check
			ds     []algorithms.Decision
		}
		var admitted []taken
		var history []string
		for i := range 200 {
			sp := specs[r.IntN(len(specs))]
			if r.IntN(3) == 0 {
				step(r, clk, sp.Window)
			} else {
				// Within the queues' waits, mostly.
				clk.t = clk.t.Add(time.Duration(r.Int64N(int64(sp.Window)/int64(sp.Limit)+2)) - time.Duration(r.IntN(2)))
			}
			if len(admitted) > 0 && r.IntN(3) == 0 {
				// Refund an admitted Take, each at most once.
				j := r.IntN(len(admitted))
				tk := admitted[j]
				admitted = append(admitted[:j], admitted[j+1:]...)
				waited := clk.t.Sub(tk.at)
				switch r.IntN(4) {
				case 0:
					// the caller's clock off by up to a spacing
					q := tk.checks[r.IntN(len(tk.checks))].Spec
					sp := int64(q.Window) / q.Limit
					waited += time.Duration(r.Int64N(sp+1) - sp/2)
				case 1:
					waited += time.Duration(r.IntN(3) - 1)
				}
				waited = max(waited, 0)
				ds := tk.ds
				if r.IntN(4) == 0 {
					// The remaining wait stated in Delay, negative once
					// passed, with waited 0 (algorithms.Limiter.RefundN).
					ds = slices.Clone(ds)
					for k := range ds {
						ds[k].Delay -= waited
					}
					waited = 0
				}
				wdst := make([]algorithms.Refunded, len(tk.checks))
				gdst := make([]algorithms.Refunded, len(tk.checks))
				werr := mem.Refund(ctx, wdst, tk.checks, ds, waited)
				gerr := rs.Refund(ctx, gdst, tk.checks, ds, waited)
				mdst, merr := model.RefundAt(clk.t, tk.checks, ds, waited)
				history = append(history, fmt.Sprintf("step %d at %d: refund of the Take at %d, waited %d: %+v %+v",
					i, clk.t.UnixNano(), tk.at.UnixNano(), waited, tk.checks, ds))
				if (werr == nil) != (gerr == nil) || (werr == nil) != (merr == nil) {
					t.Fatalf("%s\nrefund errors differ: memory %v, redis %v, model %v", join(history), werr, gerr, merr)
				}
				for k := range mdst {
					if werr != nil {
						break
					}
					if wdst[k] != mdst[k] || gdst[k] != mdst[k] {
						t.Fatalf("%s\nrefund report of check %d (%s):\n\tredis  %+v\n\tmemory %+v\n\tmodel  %+v", join(history), k, tk.checks[k].Spec, gdst[k], wdst[k], mdst[k])
					}
					c := tk.checks[k]
					switch {
					case c.Spec.Algorithm != algorithms.LeakyQueue || !allowed(ds):
					case mdst[k].Given && c.Cost > 1:
						givenCost.Add(1)
					case !mdst[k].Given && mdst[k].ResetAfter > 0:
						kept.Add(1)
					}
				}
				if r.IntN(2) == 0 {
					// The next Take from a clock a little behind the refund's.
					q := tk.checks[r.IntN(len(tk.checks))].Spec
					clk.t = clk.t.Add(-time.Duration(r.Int64N(int64(q.Window)/q.Limit + 1)))
				}
				continue
			}
			checks := randomChecks(r, specs, keys, 3)
			want, werr := takeAlike(t, mem, rs, clk, &history, i, checks)
			mds, merr := model.TakeAt(clk.t, checks...)
			if (werr == nil) != (merr == nil) {
				t.Fatalf("%s\nerrors differ: memory %v, model %v", join(history), werr, merr)
			}
			for k := range mds {
				if werr == nil && mds[k] != want[k] {
					t.Fatalf("%s\ncheck %d (%s): memory %+v\n           model %+v", join(history), k, checks[k].Spec, want[k], mds[k])
				}
			}
			if werr == nil {
				admitted = append(admitted, taken{clk.t, checks, want}) // a denied one refunds nothing
			}
		}
	})
	if kept.Load() == 0 || givenCost.Load() == 0 {
		t.Errorf("the traces refunded %d places kept behind a later request and gave back %d of cost above 1; want some of each", kept.Load(), givenCost.Load())
	}
}

// allowed reports whether every decision of ds admitted.
func allowed(ds []algorithms.Decision) bool {
	for _, d := range ds {
		if !d.Allowed {
			return false
		}
	}
	return true
}

// TestRefundExtremeWaits: remaining waits far beyond any queue's (a
// Decision not from a store, a wait of centuries, a Delay that went by
// centuries ago) give the same outcome on
// Redis, whose script takes them within its wide values' range, as in
// memory.
func TestRefundExtremeWaits(t *testing.T) {
	client := newClient(t)
	queue := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1_000_000_000, Window: 24 * time.Hour, MaxDelay: time.Hour}
	c := []algorithms.Check{{Spec: queue, Key: "k", Cost: 1000}}
	for _, tc := range []struct {
		delay, waited time.Duration
	}{
		{1<<63 - 1, 0},
		{1 << 52, 0},
		{0, 1<<63 - 1},
		{time.Hour, 1 << 53},
		{time.Hour, 1<<51 + 1},
		// A Delay stating the remaining wait, negative once passed
		// (algorithms.Limiter.RefundN).
		{-time.Second, 0},
		{-1 << 52, 0},
		{-2, 1<<63 - 1},
		{-1 << 63, 1<<63 - 1},
		{-1 << 63, 0},
	} {
		t.Run(fmt.Sprintf("delay=%d,waited=%d", tc.delay, tc.waited), func(t *testing.T) {
			clk := &manualClock{t: time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)}
			mem, rs := pairedStores(t, client, clk)
			reported, got := refundOnBoth(t, mem, rs, c, tc.delay, tc.waited, nil)
			if got[0] != got[1] {
				t.Errorf("after the refund: memory %+v, redis %+v", got[0], got[1])
			}
			if reported[0] != reported[1] {
				t.Errorf("the refund reported: memory %+v, redis %+v", reported[0], reported[1])
			}
		})
	}
}

// refundOnBoth takes c three times on mem and then on rs, refunds the last
// Take of each with its Delay set to delay and the given waited, and takes
// c once more; it returns what each refund reported and what each last
// Take decided (memory first). shift, if not nil, is called with true
// before each refund and with false after it (to move the clock for it).
func refundOnBoth(t *testing.T, mem, rs algorithms.Refunder, c []algorithms.Check, delay, waited time.Duration, shift func(refunding bool)) (reported [2]algorithms.Refunded, got [2]algorithms.Decision) {
	t.Helper()
	for i, s := range []algorithms.Refunder{mem, rs} {
		var ds []algorithms.Decision
		var err error
		for range 3 {
			if ds, err = s.Take(t.Context(), c...); err != nil {
				t.Fatal(err)
			}
		}
		ds[0].Delay = delay
		rep := make([]algorithms.Refunded, 1)
		if shift != nil {
			shift(true)
		}
		if err := s.Refund(t.Context(), rep, c, ds, waited); err != nil {
			t.Fatalf("%T: %v", s, err)
		}
		if shift != nil {
			shift(false)
		}
		reported[i] = rep[0]
		d, err := s.Take(t.Context(), c...)
		if err != nil {
			t.Fatal(err)
		}
		got[i] = d[0]
	}
	return reported, got
}
