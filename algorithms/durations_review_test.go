package algorithms_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestReviewDurationsAreFirstInstants probes the Decision fields of the
// package documentation on random states of every kind, on specs at the
// edges of the allowed range (algotest.EdgeSpecs: limits up to MaxLimit,
// windows up to 24 h): after each Take at t, judged by peeking the store
// and the exact Model at neighbouring instants,
//
//   - a denied request is denied at t+RetryAfter−1ns and admitted at
//     t+RetryAfter (the shortest wait);
//   - at t+ResetAfter the key has its full allowance (Remaining = Limit,
//     nothing to wait), and one nanosecond before it has not;
//   - Remaining grows at t+NextAfter and not before, and NextAfter is 0
//     exactly when Remaining is at Limit;
//   - Remaining is the whole units left: a request of that cost is
//     admitted at t, one of a unit more is not (leaky_queue: Remaining is
//     a count of unit requests, and a request of the whole capacity is
//     admitted exactly when it is not 0);
//   - a Take stacked with a check on another key, denied, is admitted
//     first after the longest RetryAfter of its checks.
func TestReviewDurationsAreFirstInstants(t *testing.T) {
	r := rand.New(rand.NewPCG(2026, 12))
	byKind := map[algorithms.Kind][]algorithms.Spec{}
	for _, s := range algotest.EdgeSpecs() {
		byKind[s.Algorithm] = append(byKind[s.Algorithm], s)
	}
	perKind := 40
	if testing.Short() {
		perKind = 12
	}
	for _, k := range algorithms.Kinds {
		specs := byKind[k]
		r.Shuffle(len(specs), func(i, j int) { specs[i], specs[j] = specs[j], specs[i] })
		for _, spec := range specs[:min(perKind, len(specs))] {
			probeDurations(t, r, spec)
		}
	}
}

func probeDurations(t *testing.T, r *rand.Rand, spec algorithms.Spec) {
	t.Helper()
	clk := algotest.NewClock(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(r.Int64N(int64(spec.Window)))))
	s := newMemoryStore(t, algorithms.WithClock(clk))
	m := algotest.NewModel()
	w := int64(spec.Window)
	capy := spec.Capacity()
	queue := spec.Algorithm == algorithms.LeakyQueue

	// peek returns the store's Peek of cost n on key k at instant at,
	// having checked it against the Model's; the clock is put back after.
	var peekKey func(at time.Time, key string, n int64) algorithms.Decision
	peek := func(at time.Time, n int64) algorithms.Decision {
		t.Helper()
		return peekKey(at, "k", n)
	}
	peekKey = func(at time.Time, key string, n int64) algorithms.Decision {
		t.Helper()
		back := clk.Now()
		clk.Set(at)
		defer clk.Set(back)
		c := algorithms.Check{Spec: spec, Key: key, Cost: n}
		var got [1]algorithms.Decision
		if err := s.Peek(ctx, got[:], []algorithms.Check{c}); err != nil {
			t.Fatal(err)
		}
		want, err := m.PeekAt(at, c)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != want[0] {
			t.Fatalf("%v: Peek(cost %d) at %v:\nstore %+v\nmodel %+v", spec, n, at, got[0], want[0])
		}
		return got[0]
	}

	var last algorithms.Decision
	for step := range 30 {
		switch g := r.IntN(12); {
		case g < 2:
		case g < 3:
			clk.Advance(1)
		case g < 5:
			clk.Advance(time.Duration(1 + r.Int64N(max(w/spec.Limit, 1)*3)))
		case g < 7:
			clk.Advance(time.Duration(r.Int64N(w)))
		case g < 8:
			clk.Advance(last.RetryAfter + last.NextAfter - time.Duration(r.IntN(2)))
		case g < 10:
			clk.Advance(time.Duration(w + r.Int64N(2*w)))
		default:
			clk.Advance(-time.Duration(1 + r.Int64N(2*w)))
		}
		cost := []int64{1, 2, capy, capy - 1, last.Remaining, last.Remaining + 1, 1 + r.Int64N(capy)}[r.IntN(7)]
		cost = min(max(cost, 1), capy)
		checks := []algorithms.Check{{Spec: spec, Key: "k", Cost: cost}}
		if r.IntN(4) == 0 {
			// Stacked with another key: all or nothing.
			checks = append(checks, algorithms.Check{Spec: spec, Key: "o", Cost: 1 + r.Int64N(capy)})
		}
		now := clk.Now()
		ds, err := s.Take(ctx, checks...)
		if err != nil {
			t.Fatal(err)
		}
		want, err := m.TakeAt(now, checks...)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ds {
			if ds[i] != want[i] {
				t.Fatalf("%v step %d: Take(%+v), check %d:\nstore %+v\nmodel %+v", spec, step, checks, i, ds[i], want[i])
			}
		}
		d := ds[0]
		last = d
		where := func() string { return fmt.Sprintf("%v step %d checks %+v", spec, step, checks) }

		// The whole Take is admitted first after the longest RetryAfter of
		// its checks (on two keys, each waits on its own).
		if len(checks) == 2 && (!ds[0].Allowed || !ds[1].Allowed) {
			wait := max(ds[0].RetryAfter, ds[1].RetryAfter)
			both := func(at time.Time) bool {
				return peekKey(at, "k", checks[0].Cost).Allowed && peekKey(at, "o", checks[1].Cost).Allowed
			}
			if both(now.Add(wait-1)) || !both(now.Add(wait)) {
				t.Fatalf("%s: denied Take %+v: not first admitted after the longest RetryAfter %v", where(), ds, wait)
			}
		}

		// RetryAfter: the shortest wait after which the same request is admitted.
		if d.Allowed {
			if d.RetryAfter != 0 {
				t.Fatalf("%s: admitted with RetryAfter %v", where(), d.RetryAfter)
			}
		} else {
			if d.RetryAfter <= 0 {
				t.Fatalf("%s: denied with RetryAfter %v", where(), d.RetryAfter)
			}
			if p := peek(now.Add(d.RetryAfter-1), cost); p.Allowed {
				t.Fatalf("%s: RetryAfter %v, but admitted 1ns earlier: %+v", where(), d.RetryAfter, p)
			}
			if p := peek(now.Add(d.RetryAfter), cost); !p.Allowed {
				t.Fatalf("%s: RetryAfter %v, but still denied then: %+v", where(), d.RetryAfter, p)
			}
		}

		// ResetAfter: until the full allowance is back, nothing to wait.
		full := func(p algorithms.Decision) bool {
			return p.Remaining == capy && p.ResetAfter == 0 && p.NextAfter == 0 && p.Delay == 0
		}
		if p := peek(now.Add(d.ResetAfter), 1); !full(p) {
			t.Fatalf("%s: ResetAfter %v, but the key is not back to full then: %+v", where(), d.ResetAfter, p)
		}
		if d.ResetAfter > 0 {
			if p := peek(now.Add(d.ResetAfter-1), 1); full(p) {
				t.Fatalf("%s: ResetAfter %v, but the key is full 1ns earlier: %+v", where(), d.ResetAfter, p)
			}
		}

		// NextAfter: until Remaining grows; 0 exactly at Limit.
		if (d.NextAfter == 0) != (d.Remaining == capy) {
			t.Fatalf("%s: NextAfter %v with Remaining %d of %d", where(), d.NextAfter, d.Remaining, capy)
		}
		if d.Remaining < capy {
			if p := peek(now.Add(d.NextAfter), 1); p.Remaining <= d.Remaining {
				t.Fatalf("%s: NextAfter %v, but Remaining %d has not grown then: %+v", where(), d.NextAfter, d.Remaining, p)
			}
			if p := peek(now.Add(d.NextAfter-1), 1); p.Remaining > d.Remaining {
				t.Fatalf("%s: NextAfter %v, but Remaining %d grew 1ns earlier: %+v", where(), d.NextAfter, d.Remaining, p)
			}
		}

		// Remaining: the whole units left after this decision.
		if p := peek(now, 1); p.Remaining != d.Remaining || p.Allowed != (d.Remaining > 0) {
			t.Fatalf("%s: Remaining %d, but a peek at the same instant says %+v", where(), d.Remaining, p)
		}
		if queue {
			if p := peek(now, capy); p.Allowed != (d.Remaining > 0) {
				t.Fatalf("%s: Remaining %d, but a request of the whole capacity %d: %+v", where(), d.Remaining, capy, p)
			}
		} else {
			if d.Remaining > 0 {
				if p := peek(now, d.Remaining); !p.Allowed {
					t.Fatalf("%s: Remaining %d, but a request of that cost is denied: %+v", where(), d.Remaining, p)
				}
			}
			if d.Remaining < capy {
				if p := peek(now, d.Remaining+1); p.Allowed {
					t.Fatalf("%s: Remaining %d, but a request of one unit more is admitted: %+v", where(), d.Remaining, p)
				}
			}
		}
	}
}

// TestReviewLeakyQueueRemainingAndResetAfter pins what Decision's
// documentation says of a leaky_queue: Remaining counts the unit requests
// the queue would still admit now, and a request of any cost up to the
// capacity is admitted while it is not 0; ResetAfter runs until the queue
// is empty, which can be after Remaining is back at Limit (NextAfter 0).
// At 10 per second with MaxDelay 250ms the queue holds 3 (spacing 100ms).
func TestReviewLeakyQueueRemainingAndResetAfter(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: time.Second, MaxDelay: 250 * time.Millisecond}
	if spec.Capacity() != 3 {
		t.Fatalf("Capacity() = %d, want 3", spec.Capacity())
	}
	s, clk := newStore(t)
	unit := algorithms.Check{Spec: spec, Key: "q"}
	take(t, s, unit)
	d := take(t, s, unit)[0] // the queue is free 200ms from now
	if !d.Allowed || d.Remaining != 1 || d.Delay != 100*time.Millisecond {
		t.Fatalf("second unit: %+v, want admitted after 100ms with Remaining 1", d)
	}
	// Remaining 1, and a request of the whole capacity is admitted.
	d = take(t, s, algorithms.Check{Spec: spec, Key: "q", Cost: 3})[0]
	if !d.Allowed || d.Delay != 200*time.Millisecond || d.Remaining != 0 || d.ResetAfter != 500*time.Millisecond {
		t.Fatalf("cost 3 at Remaining 1: %+v, want admitted after 200ms, Remaining 0, ResetAfter 500ms", d)
	}
	// 450ms on the queue is free in 50ms: Remaining is back at Limit
	// (floor((250−50)/100)+1 = 3), NextAfter 0, but ResetAfter and the
	// Delay of a new request are 50ms.
	clk.Advance(450 * time.Millisecond)
	var p [1]algorithms.Decision
	if err := s.Peek(ctx, p[:], []algorithms.Check{unit}); err != nil {
		t.Fatal(err)
	}
	want := algorithms.Decision{Allowed: true, Limit: 3, Remaining: 3, ResetAfter: 50 * time.Millisecond, Delay: 50 * time.Millisecond}
	if p[0] != want {
		t.Errorf("50ms before the queue is free: %+v, want %+v", p[0], want)
	}
}

// TestReviewTakeOverCapacityOnOneKeyIsACostError pins what Decision's
// documentation says of checks repeated on one key and Spec in a Take:
// each is decided as if the earlier ones had been admitted just before it,
// so a Take whose checks on one key ask together for more than the key can
// ever admit at once would never be admitted, whatever its denied check's
// RetryAfter said: it is a *CostError, and consumes nothing. Here two
// checks of cost 6 on a limit of 10, and for the queue (which admits a
// request while its wait fits) one of the whole capacity then one of cost
// 1. Two checks that fit together (5 and 5), denied after a request of
// cost 5, are admitted once the key is back to its full allowance.
func TestReviewTakeOverCapacityOnOneKeyIsACostError(t *testing.T) {
	for _, k := range algorithms.Kinds {
		spec := algorithms.Spec{Algorithm: k, Limit: 10, Window: time.Second}
		first, second := int64(6), int64(6)
		switch k {
		case algorithms.SlidingBuckets:
			spec.Buckets = 2
		case algorithms.LeakyQueue:
			spec.MaxDelay = 900 * time.Millisecond // capacity 10
			first, second = 10, 1
		}
		s, clk := newStore(t)
		over := []algorithms.Check{{Spec: spec, Key: "k", Cost: first}, {Spec: spec, Key: "k", Cost: second}}
		ds, err := s.Take(t.Context(), over...)
		var ce *algorithms.CostError
		if !errors.As(err, &ce) || ce.Spec != spec || ce.Cost != second || ce.Combined != first+second {
			t.Fatalf("%s: Take(cost %d, cost %d) on one key = %+v, %v; want a *CostError of cost %d, combined %d", k, first, second, ds, err, second, first+second)
		}
		fit := []algorithms.Check{{Spec: spec, Key: "k", Cost: 5}, {Spec: spec, Key: "k", Cost: 5}}
		take(t, s, algorithms.Check{Spec: spec, Key: "k", Cost: 5}) // nothing consumed before: admitted
		ds = take(t, s, fit...)
		if !ds[0].Allowed || ds[1].Allowed || ds[1].RetryAfter <= 0 {
			t.Fatalf("%s: Take(cost 5, cost 5) after a request of cost 5 = %+v; want the first passing, the second denied with a wait", k, ds)
		}
		clk.Advance(ds[1].ResetAfter)
		if ds := take(t, s, fit...); !ds[0].Allowed || !ds[1].Allowed {
			t.Errorf("%s: Take(cost 5, cost 5) after the denied check's ResetAfter = %+v; want both admitted", k, ds)
		}
	}
}
