package algotest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// judgedSpecs returns a Spec of each window kind, the kinds whose checks
// can be judged at a limit below their Spec's ([algorithms.Check.Limit]):
// 100 a minute (sliding_buckets in six sub-windows of 10 s), at Base
// aligned to their windows and sub-windows.
func judgedSpecs() []algorithms.Spec {
	return []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Minute},
		{Algorithm: algorithms.SlidingLog, Limit: 100, Window: time.Minute},
		{Algorithm: algorithms.SlidingWindow, Limit: 100, Window: time.Minute},
		{Algorithm: algorithms.SlidingBuckets, Limit: 100, Window: time.Minute, Buckets: 6},
	}
}

// judged returns c judged at limit.
func judged(c algorithms.Check, limit int64) algorithms.Check {
	c.Limit = limit
	return c
}

// judgedTraceSeeds is the number of random traces Judged/traces replays;
// every fourth has limits near algorithms.MaxLimit.
const judgedTraceSeeds = 60

// runJudged checks [algorithms.Check.Limit]: a check of a window kind
// judged at a limit below its Spec's, or above it (fixed_window,
// sliding_window, sliding_buckets: see runRaised for those cases), on the
// state kept for (Spec, Key).
//
//   - lowered/<kind>: the case: 40 of 100 used, judged at 50,
//     exactly 10 unit requests are admitted, then one is denied, with the
//     Remaining, RetryAfter, ResetAfter and NextAfter worked out by hand;
//   - over/<kind>: 80 of 100 used, judged at 50: every cost is denied with
//     Remaining 0 and RetryAfter until enough has left the window that the
//     cost fits under 50 (by hand);
//   - at_spec_limit/<kind>: judged at Spec.Limit decides as Limit 0;
//   - restored/<kind>: judged lower, then at Spec.Limit again, sees every
//     unit counted while lowered;
//   - repeated/<kind>: one key named several times in one Take, each check
//     judged at its own limit after the earlier ones, as if admitted;
//   - stacked/<kind>: a judged check beside a check of another Spec on held
//     keys (a guard stacked with other policies) reports its own limit;
//   - all_or_nothing/<kind>: a judged check that fails denies the Take, and
//     nothing is consumed (and the other way round);
//   - peek/<kind>, give_back/<kind>, reset/<kind>: Peek judges at the
//     check's limit; GiveBack gives the units back to the Spec's state and
//     reports at the check's limit; Reset forgets the Spec's state, its
//     checks' Limit playing no part;
//   - concurrency/<kind>: 64 goroutines judged at 50 on a key that used 30
//     admit exactly 20;
//   - max_keys/<kind>: a flood of keys does not evict a key limited at a
//     judged limit (needs Harness.NewBounded);
//   - retry/<kind>/<n>: a denied Take of judged and unjudged checks naming
//     one key several times is admitted, unchanged, once its longest
//     RetryAfter has passed, and not a nanosecond before;
//   - raised*/<kind>: see runRaised;
//   - invalid/<case>: Limit on token_bucket, leaky_bucket and leaky_queue,
//     negative, above algorithms.MaxLimit, or on sliding_log above
//     Spec.Limit is a *algorithms.SpecError naming "Check.Limit"; a cost
//     above the judged limit (lowered or raised), or costs of one key
//     above it together, a *algorithms.CostError: ValidateChecks' error,
//     from Take, Peek, GiveBack and Refund alike, consuming nothing; on a
//     key already held too (invalid/held_key/<kind>: a store may decide
//     a held key's check in place), the same error from Take;
//   - traces/seed=<n>: random calls mixing checks with and without Limit
//     (several limits, below and above the Spec's, some near
//     algorithms.MaxLimit) on the same keys, naming keys several times,
//     with instants going back: Peek, Take (and TakeInto), GiveBack and
//     Refund are the Model's, errors included, and every decision is
//     sane.
//
// Every decision is also compared with the Model but in concurrency and
// max_keys' flood.
func runJudged(t *testing.T, h Harness) {
	for _, spec := range judgedSpecs() {
		kind := string(spec.Algorithm)
		t.Run("lowered/"+kind, func(t *testing.T) { judgedLowered(t, h, spec) })
		t.Run("over/"+kind, func(t *testing.T) { judgedOver(t, h, spec) })
		t.Run("at_spec_limit/"+kind, func(t *testing.T) { judgedAtSpecLimit(t, h, spec) })
		t.Run("restored/"+kind, func(t *testing.T) { judgedRestored(t, h, spec) })
		t.Run("repeated/"+kind, func(t *testing.T) { judgedRepeated(t, h, spec) })
		t.Run("stacked/"+kind, func(t *testing.T) { judgedStacked(t, h, spec) })
		t.Run("all_or_nothing/"+kind, func(t *testing.T) { judgedAllOrNothing(t, h, spec) })
		t.Run("peek/"+kind, func(t *testing.T) { judgedPeek(t, h, spec) })
		t.Run("give_back/"+kind, func(t *testing.T) { judgedGiveBack(t, h, spec) })
		t.Run("reset/"+kind, func(t *testing.T) { judgedReset(t, h, spec) })
		t.Run("concurrency/"+kind, func(t *testing.T) { judgedConcurrency(t, h, spec) })
		t.Run("max_keys/"+kind, func(t *testing.T) { judgedMaxKeys(t, h, spec) })
		if spec.Algorithm.Raisable() {
			runRaised(t, h, spec)
		}
	}
	for si, spec := range judgedRetrySpecs() {
		t.Run(fmt.Sprintf("retry/%s/%d", spec.Algorithm, si), func(t *testing.T) { judgedRetry(t, h, spec, uint64(si)) })
	}
	judgedInvalid(t, h)
	for seed := range uint64(judgedTraceSeeds) {
		t.Run(fmt.Sprintf("traces/seed=%d", seed), func(t *testing.T) { judgedTrace(t, h, seed) })
	}
}

// loweredWant returns the decision of the i-th (1 to 11) unit request
// judged at 50 at +20 s on a key of spec, one of judgedSpecs, that took 40
// at +10 s, worked out by hand (see judgedWant).
func loweredWant(kind algorithms.Kind, i int64) algorithms.Decision {
	return judgedWant(kind, 40, 50, i)
}

// judgedWant returns the decision of the i-th (1 to 11) unit request
// judged at limit at +20 s on a key of a Spec of judgedSpecs (a window of
// a minute, sub-windows of 10 s) that took used = limit − 10 at +10 s,
// worked out by hand:
//
//   - fixed_window: the window ends at +60 s; used+i counted.
//   - sliding_log: the used leave the window at +70 s + 1 ns, the requests
//     of +20 s at +80 s + 1 ns: room below limit grows once the used leave.
//   - sliding_window: the window of +20 s (e = 20 s) counts used+i; room
//     grows in the next window once used+i weighs less than used+i−1:
//     (used+i)·(60 s − e')/60 s <= used+i−1, e' = ceil(60 s/(used+i)); the
//     11th, with limit counted, needs limit·(60 s − e')/60 s <= limit−1,
//     e' = ceil(60 s/limit). The key is clear two windows after +0 s.
//   - sliding_buckets: the used are in the sub-window of +10 s, which
//     leaves at +70 s; the requests of +20 s at +80 s.
func judgedWant(kind algorithms.Kind, used, limit, i int64) algorithms.Decision {
	const s = time.Second
	ceilMinute := func(k int64) time.Duration { return time.Duration((int64(time.Minute) + k - 1) / k) }
	d := algorithms.Decision{Allowed: i <= 10, Limit: limit, Remaining: max(10-i, 0)}
	switch kind {
	case algorithms.FixedWindow:
		d.ResetAfter, d.NextAfter = 40*s, 40*s
		if !d.Allowed {
			d.RetryAfter = 40 * s
		}
	case algorithms.SlidingLog:
		d.ResetAfter, d.NextAfter = 60*s+1, 50*s+1
		if !d.Allowed {
			d.RetryAfter = 50*s + 1
		}
	case algorithms.SlidingWindow:
		d.ResetAfter = 100 * s
		if d.Allowed {
			d.NextAfter = 40*s + ceilMinute(used+i)
		} else {
			d.RetryAfter, d.NextAfter = 40*s+ceilMinute(limit), 40*s+ceilMinute(limit)
		}
	case algorithms.SlidingBuckets:
		d.ResetAfter, d.NextAfter = 60*s, 50*s
		if !d.Allowed {
			d.RetryAfter = 50 * s
		}
	}
	return d
}

// judgedLowered: the case. A key that took 40 of 100 at +10 s is
// judged at 50 at +20 s: exactly 10 unit requests are admitted, not a
// fresh 50, and the 11th is denied (see loweredWant).
func judgedLowered(t *testing.T, h Harness, spec algorithms.Spec) {
	e := newEnv(t, h)
	k := algorithms.Check{Spec: spec, Key: "k"}
	e.take(10*time.Second, algorithms.Check{Spec: spec, Key: "k", Cost: 40})
	for i := int64(1); i <= 11; i++ {
		got := e.take(20*time.Second, judged(k, 50))[0]
		if want := loweredWant(spec.Algorithm, i); got != want {
			t.Errorf("%s, 40 taken at +10s: unit request %d judged at 50 at +20s = %+v, want %+v", spec, i, got, want)
		}
	}
}

// judgedOver: a key that took 30, 20 and 30 of 100 at +5, +15 and +25 s
// is judged at 50 at +30 s, its 80 above the limit: every cost is denied
// with Remaining 0, and RetryAfter until enough has left the window that
// the cost fits below 50, worked out by hand:
//
//   - fixed_window: the window ends at +60 s, for every cost.
//   - sliding_log: the 30 of +5 s leave at +65 s + 1 ns (50 left), the 20
//     of +15 s at +75 s + 1 ns (30 left), the 30 of +25 s at +85 s + 1 ns.
//     Costs 1 and 20 fit once 30 are left, 21 and 50 once none are.
//   - sliding_window: the 80 of the window of +0 s weigh 80·(60 s − e')/60 s
//     in the next window; cost n fits once that is at most 50−n:
//     60 s − e' <= (50−n)·0.75 s, a wait of 90 s less (50−n)·0.75 s.
//   - sliding_buckets: the sub-windows of +0, +10 and +20 s leave at
//     +60, +70 and +80 s.
//
// Unjudged, the key admits 19 more, and judged at 90 then, 8.
func judgedOver(t *testing.T, h Harness, spec algorithms.Spec) {
	const s = time.Second
	e := newEnv(t, h)
	k := algorithms.Check{Spec: spec, Key: "k"}
	for _, tk := range []struct {
		at   time.Duration
		cost int64
	}{{5 * s, 30}, {15 * s, 20}, {25 * s, 30}} {
		e.take(tk.at, algorithms.Check{Spec: spec, Key: "k", Cost: tk.cost})
	}
	retries := map[algorithms.Kind][4]time.Duration{ // costs 1, 20, 21, 50
		algorithms.FixedWindow:    {30 * s, 30 * s, 30 * s, 30 * s},
		algorithms.SlidingLog:     {45*s + 1, 45*s + 1, 55*s + 1, 55*s + 1},
		algorithms.SlidingWindow:  {53250 * time.Millisecond, 67500 * time.Millisecond, 68250 * time.Millisecond, 90 * s},
		algorithms.SlidingBuckets: {40 * s, 40 * s, 50 * s, 50 * s},
	}
	resets := map[algorithms.Kind][2]time.Duration{ // ResetAfter, NextAfter
		algorithms.FixedWindow:    {30 * s, 30 * s},
		algorithms.SlidingLog:     {55*s + 1, 45*s + 1},
		algorithms.SlidingWindow:  {90 * s, 53250 * time.Millisecond},
		algorithms.SlidingBuckets: {50 * s, 40 * s},
	}
	pk, _ := e.store.(algorithms.Peeker)
	for i, cost := range []int64{1, 20, 21, 50} {
		c := judged(k, 50)
		c.Cost = cost
		w := algorithms.Decision{Limit: 50, RetryAfter: retries[spec.Algorithm][i], ResetAfter: resets[spec.Algorithm][0], NextAfter: resets[spec.Algorithm][1]}
		if pk != nil {
			// A Peek reports what the Take does: it is denied.
			if p := peekBoth(t, e.clock, pk, e.model, Base.Add(30*s), []algorithms.Check{c})[0]; p != w {
				t.Errorf("%s, 80 taken: Peek of cost %d judged at 50 at +30s = %+v, want %+v", spec, cost, p, w)
			}
		}
		if got := e.take(30*s, c)[0]; got != w {
			t.Errorf("%s, 80 taken: cost %d judged at 50 at +30s = %+v, want %+v", spec, cost, got, w)
		}
	}
	if d := e.take(30*s, k)[0]; !d.Allowed || d.Limit != 100 || d.Remaining != 19 {
		t.Errorf("%s, 80 taken and the judged requests denied: an unjudged request at +30s = %+v, want admitted with Remaining 19 of 100", spec, d)
	}
	if d := e.take(30*s, judged(k, 90))[0]; !d.Allowed || d.Limit != 90 || d.Remaining != 8 {
		t.Errorf("%s, 81 taken: a request judged at 90 at +30s = %+v, want admitted with Remaining 8 of 90", spec, d)
	}
}

// judgedAtSpecLimit: a key judged at its Spec's limit decides as a key
// that is not judged, step by step (random costs and instants, a key
// named twice in one call, judged and not), and as the Model.
func judgedAtSpecLimit(t *testing.T, h Harness, spec algorithms.Spec) {
	e := newEnv(t, h)
	r := rand.New(rand.NewPCG(7, uint64(len(spec.Algorithm))))
	var at time.Duration
	for step := range 60 {
		at += time.Duration(r.Int64N(int64(15 * time.Second)))
		if r.IntN(6) == 0 {
			at -= time.Duration(r.Int64N(int64(20 * time.Second))) // back
		}
		n := 1 + r.IntN(3)
		costs := make([]int64, n)
		for i := range costs {
			costs[i] = r.Int64N(40)
		}
		plain := make([]algorithms.Check, n)
		atLimit := make([]algorithms.Check, n)
		for i, cost := range costs {
			plain[i] = algorithms.Check{Spec: spec, Key: "plain", Cost: cost}
			atLimit[i] = algorithms.Check{Spec: spec, Key: "at-limit", Cost: cost}
			if i%2 == step%2 || n == 1 {
				atLimit[i].Limit = spec.Limit
			}
		}
		plain, atLimit = FitRepeats(plain), FitRepeats(atLimit)
		want := e.take(at, plain...)
		got := e.take(at, atLimit...)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d at +%v: Take(%s) = %+v; the same Take unjudged = %+v", step, at, formatChecks(atLimit), got, want)
		}
	}
}

// judgedRestored: a key judged at 50 takes its last 10 there; unjudged
// again, at Spec.Limit or without Limit, it sees the 50 counted (49 left,
// then 48), and judged at 50 again it is denied.
func judgedRestored(t *testing.T, h Harness, spec algorithms.Spec) {
	e := newEnv(t, h)
	k := algorithms.Check{Spec: spec, Key: "k"}
	e.take(10*time.Second, algorithms.Check{Spec: spec, Key: "k", Cost: 40})
	ten := judged(k, 50)
	ten.Cost = 10
	if d := e.take(20*time.Second, ten)[0]; !d.Allowed || d.Remaining != 0 {
		t.Fatalf("%s, 40 taken: cost 10 judged at 50 = %+v, want admitted with Remaining 0", spec, d)
	}
	if d := e.take(20*time.Second, k)[0]; !d.Allowed || d.Limit != 100 || d.Remaining != 49 {
		t.Errorf("%s, 40 taken, then 10 judged at 50: unjudged again = %+v, want admitted with Remaining 49 of 100", spec, d)
	}
	if d := e.take(20*time.Second, judged(k, 50))[0]; d.Allowed {
		t.Errorf("%s, 51 taken: judged at 50 again = %+v, want denied", spec, d)
	}
	if d := e.take(20*time.Second, judged(k, 100))[0]; !d.Allowed || d.Limit != 100 || d.Remaining != 48 {
		t.Errorf("%s, 51 taken: judged at Spec.Limit = %+v, want admitted with Remaining 48 of 100", spec, d)
	}
}

// judgedRepeated: a key that took 40 is named three times in one Take,
// judged at 50, unjudged, at 50: the first two pass (45 of 50, 50 of 100),
// the third is denied (55 of 50), its RetryAfter the wait for 15 at 50 on
// the key before the Take (worked out by hand), and nothing is consumed;
// then the same key unjudged and at 50 is admitted (55 of 100, 0 of 50
// left); at 60, 60 and 70, three more; nine checks (past the memory
// store's batch of eight) mixing keys and limits; every one the Model's.
func judgedRepeated(t *testing.T, h Harness, spec algorithms.Spec) {
	const s = time.Second
	e := newEnv(t, h)
	k := func(limit, cost int64) algorithms.Check {
		return algorithms.Check{Spec: spec, Key: "k", Cost: cost, Limit: limit}
	}
	e.take(10*s, k(0, 40))
	ds := e.take(20*s, k(50, 5), k(0, 5), k(50, 5))
	retry := map[algorithms.Kind]time.Duration{
		// 35 or fewer counted: the next window; the 40's sub-window or
		// instant leaving; the 40 weighing 35 or less, (60 s − e')·40/60 s
		// <= 35 at e' = 7.5 s.
		algorithms.FixedWindow:    40 * s,
		algorithms.SlidingLog:     50*s + 1,
		algorithms.SlidingWindow:  47500 * time.Millisecond,
		algorithms.SlidingBuckets: 50 * s,
	}[spec.Algorithm]
	if !ds[0].Allowed || !ds[1].Allowed || ds[2].Allowed ||
		ds[0].Limit != 50 || ds[0].Remaining != 10 || ds[1].Limit != 100 || ds[1].Remaining != 60 ||
		ds[2].Limit != 50 || ds[2].Remaining != 0 || ds[2].RetryAfter != retry {
		t.Errorf("%s, 40 taken: Take(5 at 50, 5, 5 at 50) = %+v; want the first two passing as the key is (10 of 50, 60 of 100 left), the third denied with Remaining 0 of 50 and RetryAfter %v", spec, ds, retry)
	}
	ds = e.take(20*s, k(0, 5), k(50, 5))
	if !allAllowed(ds) || ds[0].Remaining != 55 || ds[1].Remaining != 0 {
		t.Errorf("%s, 40 taken: Take(5, 5 at 50) = %+v; want both admitted, 55 of 100 and 0 of 50 left", spec, ds)
	}
	ds = e.take(20*s, k(60, 1), k(60, 1), k(70, 3))
	if !allAllowed(ds) || ds[0].Remaining != 9 || ds[1].Remaining != 8 || ds[2].Remaining != 15 {
		t.Errorf("%s, 50 taken: Take(1 at 60, 1 at 60, 3 at 70) = %+v; want all admitted, 9 and 8 of 60, 15 of 70 left", spec, ds)
	}
	o := func(key string, limit int64) algorithms.Check {
		return algorithms.Check{Spec: spec, Key: key, Limit: limit}
	}
	e.take(25*s, o("a", 1), k(56, 1), o("b", 0), k(0, 2), o("a", 0), k(60, 1), o("c", 3), k(100, 1), k(59, 0))
	e.take(25*s, o("a", 1), k(70, 1), o("b", 0), k(0, 2), o("a", 0), k(90, 1), o("c", 3), k(100, 1), k(61, 0))
	e.take(25*s, k(0, 1))
}

// judgedStacked: a key that took 40 under spec and 1 under another Spec,
// both held, Takes a check judged at 50 beside the other Spec's (the Take
// of a lowered policy stacked with another): admitted, 9 of 50 and 998 of
// 1000 left; then 10 more at 50 beside it are denied, the other check
// passing as it is, nothing consumed; the reverse order, the same.
func judgedStacked(t *testing.T, h Harness, spec algorithms.Spec) {
	e := newEnv(t, h)
	other := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1000, Window: time.Hour}, Key: "k"}
	e.take(10*time.Second, algorithms.Check{Spec: spec, Key: "k", Cost: 40}, other)
	ds := e.take(20*time.Second, judged(algorithms.Check{Spec: spec, Key: "k"}, 50), other)
	if !allAllowed(ds) || ds[0].Limit != 50 || ds[0].Remaining != 9 || ds[1].Limit != 1000 || ds[1].Remaining != 998 {
		t.Errorf("%s, 40 taken: Take(1 at 50, another Spec's) = %+v; want both admitted, 9 of 50 and 998 of 1000 left", spec, ds)
	}
	ten := judged(algorithms.Check{Spec: spec, Key: "k", Cost: 10}, 50)
	for _, call := range [][]algorithms.Check{{ten, other}, {other, ten}} {
		ds = e.take(20*time.Second, call...)
		j, o := ds[0], ds[1]
		if call[0] == other {
			j, o = o, j
		}
		if j.Allowed || j.Limit != 50 || j.Remaining != 9 || !o.Allowed || o.Remaining != 998 {
			t.Errorf("%s, 41 taken: Take(%s) = %+v; want the 10 at 50 denied (9 of 50 left), the other passing as it is (998 of 1000)", spec, formatChecks(call), ds)
		}
	}
}

// judgedAllOrNothing: a judged check that fails denies its Take, whose
// other checks consume nothing; an unjudged one that fails, the same for a
// judged one that passes.
func judgedAllOrNothing(t *testing.T, h Harness, spec algorithms.Spec) {
	e := newEnv(t, h)
	k := algorithms.Check{Spec: spec, Key: "k", Cost: 45}
	e.take(10*time.Second, k)
	p := algorithms.Check{Spec: spec, Key: "p"}
	ten := judged(algorithms.Check{Spec: spec, Key: "k", Cost: 10}, 50)
	ds := e.take(20*time.Second, p, ten)
	if !ds[0].Allowed || ds[1].Allowed || ds[0].Remaining != 100 {
		t.Fatalf("%s: Take(p, 10 of k at 50) with 45 of k taken = %+v; want p passing as it is (100 left), the judged check denied", spec, ds)
	}
	if d := e.take(20*time.Second, p)[0]; d.Remaining != 99 {
		t.Errorf("%s: p after the denied Take: %+v, want Remaining 99: the denied Take consumed", spec, d)
	}
	// The same key unjudged before it: passes alone, consumes nothing.
	ds = e.take(20*time.Second, algorithms.Check{Spec: spec, Key: "k", Cost: 3}, judged(algorithms.Check{Spec: spec, Key: "k", Cost: 3}, 50))
	if !ds[0].Allowed || ds[1].Allowed || ds[0].Remaining != 55 || ds[1].Remaining != 2 {
		t.Errorf("%s: Take(3 of k, 3 of k at 50) with 45 taken = %+v; want the first passing as k is (55 of 100 left), the second denied (2 of 50 left after the first)", spec, ds)
	}
	// A judged check that passes, and an exhausted key: nothing consumed.
	closed := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: "closed"}
	e.take(20*time.Second, closed)
	if ds := e.take(20*time.Second, judged(algorithms.Check{Spec: spec, Key: "k", Cost: 5}, 50), closed); !ds[0].Allowed || ds[1].Allowed {
		t.Errorf("%s: Take(5 of k at 50, an exhausted key) = %+v; want the first passing, the second denied", spec, ds)
	}
	if d := e.take(20*time.Second, judged(algorithms.Check{Spec: spec, Key: "k", Cost: 5}, 50))[0]; !d.Allowed || d.Remaining != 0 {
		t.Errorf("%s: 5 of k at 50 after the denied Take = %+v, want admitted with Remaining 0: the denied Take consumed", spec, d)
	}
}

// judgedPeek: the lowered case with a Peek before every Take: each is the
// Model's, and judged at 50 (a Peek of a request that the Take then
// admits reports one unit more); a key the store does not hold peeks as
// fresh at the judged limit.
func judgedPeek(t *testing.T, h Harness, spec algorithms.Spec) {
	e := newEnv(t, h)
	pk, ok := e.store.(algorithms.Peeker)
	if !ok {
		t.Skipf("the store (%T) does not implement algorithms.Peeker", e.store)
	}
	pe := &peekEnv{e, pk}
	k := algorithms.Check{Spec: spec, Key: "k"}
	e.take(10*time.Second, algorithms.Check{Spec: spec, Key: "k", Cost: 40})
	for i := int64(1); i <= 11; i++ {
		p := pe.peek(20*time.Second, judged(k, 50), k)
		d := e.take(20*time.Second, judged(k, 50))[0]
		if p[0].Allowed != d.Allowed || p[0].Limit != 50 || p[0].Remaining != 10-i+1 || p[1].Limit != 100 || p[1].Remaining != 100-40-i+1 {
			t.Errorf("%s, %d taken: Peek(at 50, unjudged) = %+v, then Take at 50 = %+v; want the Peek judged at 50 (%d left) and at 100 (%d left), deciding as the Take", spec, 40+i-1, p, d, 10-i+1, 100-40-i+1)
		}
	}
	fresh := algorithms.Check{Spec: spec, Key: "fresh", Cost: 50, Limit: 50}
	if p := pe.peek(20*time.Second, fresh)[0]; !p.Allowed || p.Limit != 50 || p.Remaining != 50 || p.ResetAfter != 0 || p.NextAfter != 0 {
		t.Errorf("%s: Peek of an unknown key, cost 50 judged at 50 = %+v, want a fresh key's decision at 50", spec, p)
	}
	if ds := e.take(20*time.Second, fresh); !ds[0].Allowed || ds[0].Remaining != 0 {
		t.Errorf("%s: Take of an unknown key, cost 50 judged at 50 = %+v, want admitted with 0 left", spec, ds[0])
	}
}

// judgedGiveBack: a key that took 40 takes 10 judged at 50 and gives them
// back 5 s later: they come back to the Spec's state, and the report is
// judged at 50 (10 left); the 10 are admitted again at 50, and a Take of
// the key unjudged and judged, given back, gives back both.
func judgedGiveBack(t *testing.T, h Harness, spec algorithms.Spec) {
	const s = time.Second
	e := newEnv(t, h)
	gb, ok := e.store.(algorithms.GiveBacker)
	if !ok {
		t.Skipf("the store (%T) does not implement algorithms.GiveBacker", e.store)
	}
	e.take(10*s, algorithms.Check{Spec: spec, Key: "k", Cost: 40})
	ten := judged(algorithms.Check{Spec: spec, Key: "k", Cost: 10}, 50)
	ds := e.take(20*s, ten)
	got := giveBackBoth(t, e.clock, gb, e.model, 25*s, 5*s, []algorithms.Check{ten}, ds)
	if !got[0].Given || !got[0].Allowed || got[0].Limit != 50 || got[0].Remaining != 10 {
		t.Errorf("%s: 10 judged at 50 given back = %+v, want given, reported at 50 with 10 left", spec, got[0])
	}
	if d := e.take(25*s, ten)[0]; !d.Allowed || d.Remaining != 0 {
		t.Errorf("%s: 10 judged at 50 after the give-back = %+v, want admitted with 0 left", spec, d)
	}
	both := []algorithms.Check{{Spec: spec, Key: "j", Cost: 30}, judged(algorithms.Check{Spec: spec, Key: "j", Cost: 20}, 50)}
	ds = e.take(26*s, both...)
	got = giveBackBoth(t, e.clock, gb, e.model, 27*s, s, both, ds)
	if !got[0].Given || !got[1].Given || got[0].Remaining != 100 || got[1].Remaining != 50 {
		t.Errorf("%s: Take(30, 20 at 50) given back = %+v, want both given, the key clear (100 and 50 left)", spec, got)
	}
	e.take(27*s, both...)
}

// judgedReset: Reset of a check judged at 50 forgets the key's state under
// its Spec, its Limit playing no part (out of range too, as its Cost).
func judgedReset(t *testing.T, h Harness, spec algorithms.Spec) {
	e := newEnv(t, h)
	rs, ok := e.store.(algorithms.Resetter)
	if !ok {
		t.Skipf("the store (%T) does not implement algorithms.Resetter", e.store)
	}
	re := &resetEnv{env: e, rs: rs}
	k := algorithms.Check{Spec: spec, Key: "k", Cost: 80}
	e.take(10*time.Second, k)
	re.mustReset(20*time.Second, judged(k, 50))
	if d := e.take(20*time.Second, judged(algorithms.Check{Spec: spec, Key: "k", Cost: 50}, 50))[0]; !d.Allowed || d.Remaining != 0 {
		t.Errorf("%s, 80 taken and reset at 50: 50 judged at 50 = %+v, want admitted with 0 left", spec, d)
	}
	re.mustReset(20*time.Second, judged(k, spec.Limit+1))
	if d := e.take(20*time.Second, algorithms.Check{Spec: spec, Key: "k"})[0]; !d.Allowed || d.Remaining != 99 {
		t.Errorf("%s, reset with Limit above Spec.Limit: %+v, want admitted with 99 left", spec, d)
	}
}

// judgedConcurrency: 64 goroutines at one frozen instant, each making
// unit requests judged at 50 on a key that took 30, admit exactly 20,
// each seeing the one before it; the key then holds 50 of 100.
func judgedConcurrency(t *testing.T, h Harness, spec algorithms.Spec) {
	store := judgedHammer(t, h, spec, 30, 50)
	ds, err := store.Take(t.Context(), algorithms.Check{Spec: spec, Key: "hot"})
	if err != nil {
		t.Fatal(err)
	}
	if ds[0].Remaining != 49 {
		t.Errorf("%s: unjudged after the judged requests: %+v, want 49 of 100 left", spec, ds[0])
	}
}

// judgedHammer makes a store of h on a frozen clock, takes taken units of
// key "hot" of spec, and has 64 goroutines make unit requests of it judged
// at limit: exactly limit-taken must be admitted, each seeing the one
// before it (Remaining limit-taken-1 down to 0, each once). It returns the
// store, its clock still frozen.
func judgedHammer(t *testing.T, h Harness, spec algorithms.Spec, taken, limit int64) algorithms.Store {
	t.Helper()
	clock := NewClock(Base.Add(17 * time.Second)) // frozen
	store := h.New(t, clock)
	if _, err := store.Take(t.Context(), algorithms.Check{Spec: spec, Key: "hot", Cost: taken}); err != nil {
		t.Fatal(err)
	}
	admitted := hammer(t, store, judged(algorithms.Check{Spec: spec, Key: "hot"}, limit))
	rem := make([]int64, len(admitted))
	for i, d := range admitted {
		rem[i] = d.Remaining
	}
	sort.Slice(rem, func(i, j int) bool { return rem[i] > rem[j] })
	if want := limit - taken; int64(len(rem)) != want {
		t.Fatalf("%s, %d taken: %d goroutines × %d unit requests judged at %d admitted %d, want exactly %d", spec, taken, goroutines, perRoutine, limit, len(rem), want)
	}
	for i, r := range rem {
		if r != limit-taken-1-int64(i) {
			t.Fatalf("%s: the admitted requests report Remaining %v, want each of %d..0 once", spec, rem, limit-taken-1)
		}
	}
	return store
}

// judgedMaxKeys: a key limited at 5 of its Spec's 10 (its state half in
// use) is not evicted by a flood of keys that made one request each,
// judged or not: it decides as the Model after it.
func judgedMaxKeys(t *testing.T, h Harness, spec algorithms.Spec) {
	spec.Limit = 10
	victim := judged(algorithms.Check{Spec: spec, Key: "victim"}, 5)
	floodSpares(t, h, spec, slices.Repeat([]algorithms.Check{victim}, 6), false,
		func(i int) algorithms.Check {
			return algorithms.Check{Spec: spec, Key: fmt.Sprint("flood-", i), Limit: int64(i % 3 * 4)}
		},
		[]algorithms.Check{victim, {Spec: spec, Key: "victim"}}, "one-request keys")
}

// floodSpares runs a bounded store's case on spec (Harness.NewBounded,
// 256 keys, a frozen clock): the victim's checks, each decided as the
// Model decides it (and admitted, with admit), then a flood of 640 keys,
// the i-th of one request flood(i), each admitted, then the victim's
// after checks, each decided as the Model decides it: the flood did not
// evict the victim's state. what names the flood's keys in a failure.
func floodSpares(t *testing.T, h Harness, spec algorithms.Spec, victim []algorithms.Check, admit bool, flood func(i int) algorithms.Check, after []algorithms.Check, what string) {
	t.Helper()
	if h.NewBounded == nil {
		t.Skip("Harness.NewBounded is nil: the store has no key bound to test")
	}
	const maxKeys, floodKeys = 256, 640
	clock := NewClock(Base.Add(17 * time.Second)) // frozen: nothing turns idle
	store := h.NewBounded(t, clock, maxKeys)
	model := NewModel()
	take := func(c algorithms.Check) algorithms.Decision {
		t.Helper()
		ds, err := store.Take(t.Context(), c)
		if err != nil {
			t.Fatalf("Take(%s): %v", formatCheck(c), err)
		}
		return ds[0]
	}
	for i, c := range victim {
		got := take(c)
		want, _ := model.TakeAt(clock.Now(), c)
		if got != want[0] || admit && !got.Allowed {
			t.Fatalf("%s: victim request %d (%s) = %+v, want %+v (admitted: %v)", spec, i+1, formatCheck(c), got, want[0], admit)
		}
	}
	for i := range floodKeys {
		if d := take(flood(i)); !d.Allowed {
			t.Fatalf("%s: flood key %d (one request) denied: %+v", spec, i, d)
		}
	}
	for _, c := range after {
		got := take(c)
		want, _ := model.TakeAt(clock.Now(), c)
		if got != want[0] {
			t.Fatalf("%s: after a flood of %d %s (bound %d) the victim decides %+v (%s), want %+v: its state was evicted",
				spec, floodKeys, what, maxKeys, got, formatCheck(c), want[0])
		}
	}
}

// judgedRetrySpecs returns the specs Judged/retry tries: each window kind
// at capacities 4 and 10, and at windows that do not divide evenly.
func judgedRetrySpecs() []algorithms.Spec {
	var specs []algorithms.Spec
	for _, s := range append(kindSpecs(4), kindSpecs(10)...) {
		if s.Algorithm.Windowed() {
			specs = append(specs, s)
		}
	}
	return append(specs,
		algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 7, Window: 7 * time.Second},
		algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 7, Window: 7 * time.Second},
		algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 7, Window: 7 * time.Second},
		algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 7, Window: 9 * time.Second, Buckets: 3},
	)
}

// randomLimit returns a limit to judge a check of spec at: 0 (its own)
// half the time, otherwise between 1 and Spec.Limit, its ends often, or
// for a kind whose limit can be raised (algorithms.Kind.Raisable), a
// third of those times above it: just above, up to four times it, or
// near algorithms.MaxLimit.
func randomLimit(r *rand.Rand, spec algorithms.Spec) int64 {
	if !spec.Algorithm.Windowed() || r.IntN(2) == 0 {
		return 0
	}
	l := spec.Limit
	if spec.Algorithm.Raisable() && l < algorithms.MaxLimit && r.IntN(3) == 0 {
		up := algorithms.MaxLimit - l
		return l + []int64{1, min(2, up), min(1+r.Int64N(3*l), up), up, up - r.Int64N(min(up, 1000))}[r.IntN(5)]
	}
	return []int64{1, min(2, l), l / 2, l - 1, l, 1 + r.Int64N(l)}[r.IntN(6)] // l/2 and l−1 may be 0
}

// judgedRetry: random histories of single checks judged and not, then
// Takes naming one key several times (now and then with another key),
// each check judged at its own limit; a denied one must be admitted,
// unchanged, once the longest RetryAfter of its denied checks has passed,
// and not a nanosecond before (see runRepeatWait).
func judgedRetry(t *testing.T, h Harness, spec algorithms.Spec, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x1ed6ed))
	e := newEnv(t, h)
	w := int64(spec.Window)
	check := func(key string) algorithms.Check {
		c := algorithms.Check{Spec: spec, Key: key, Limit: randomLimit(r, spec)}
		c.Cost = 1 + r.Int64N(c.Judged().Capacity())
		return c
	}
	var at time.Duration
	denied := 0
	for trial := range 40 {
		k := fmt.Sprintf("k%d", trial)
		var history []string
		for range r.IntN(4) {
			at += time.Duration(r.Int64N(w))
			c := check(k)
			e.take(at, c)
			history = append(history, fmt.Sprintf("+%v Take(%s)", at, formatCheck(c)))
		}
		at += time.Duration(r.Int64N(w / 2))
		checks := []algorithms.Check{check(k)}
		for range 1 + r.IntN(3) {
			if r.IntN(5) == 0 {
				checks = append(checks, check(k+"j"))
			}
			checks = append(checks, check(k))
		}
		checks = FitRepeats(checks)
		if r.IntN(4) == 0 {
			at -= time.Duration(r.Int64N(w)) // back
		}
		ds := e.take(at, checks...)
		if allAllowed(ds) {
			continue
		}
		denied++
		at = e.repeatWaitHolds(at, checks, ds, history)
	}
	if denied == 0 {
		t.Fatal("no call was denied: the test tries nothing")
	}
}

// judgedInvalid: checks whose Limit is out of range, or whose costs pass
// the limit they are judged at, are refused by Take, Peek, GiveBack and
// (for leaky_queue) Refund with the error ValidateChecks returns, and the
// Model's, consuming nothing; the same checks within range are admitted.
func judgedInvalid(t *testing.T, h Harness) {
	fw := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Second}
	bad := algorithms.Spec{Algorithm: algorithms.SlidingLog, Window: time.Second} // Limit 0
	log := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 5, Window: time.Second}
	buckets := []algorithms.Spec{
		{Algorithm: algorithms.TokenBucket, Limit: 5, Window: time.Second},
		{Algorithm: algorithms.LeakyBucket, Limit: 5, Window: time.Second, Burst: 8},
		{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: time.Second, MaxDelay: 250 * time.Millisecond},
	}
	c := func(spec algorithms.Spec, limit, cost int64) algorithms.Check {
		return algorithms.Check{Spec: spec, Key: "k", Limit: limit, Cost: cost}
	}
	type errCase struct {
		name   string
		checks []algorithms.Check
		field  string // a *SpecError's, or "" for a *CostError
		cost   int64  // the *CostError's
		comb   int64
		judged int64 // the limit the *CostError's Spec names
	}
	cases := []errCase{
		{name: "limit_negative", checks: []algorithms.Check{c(fw, -1, 1)}, field: "Check.Limit"},
		{name: "limit_above_max", checks: []algorithms.Check{c(fw, algorithms.MaxLimit+1, 1)}, field: "Check.Limit"},
		{name: "log_limit_above_spec", checks: []algorithms.Check{c(log, 6, 1)}, field: "Check.Limit"},
		{name: "log_limit_above_max", checks: []algorithms.Check{c(log, algorithms.MaxLimit+1, 1)}, field: "Check.Limit"},
		{name: "cost_above_raised", checks: []algorithms.Check{c(fw, 8, 9)}, cost: 9, judged: 8},
		{name: "repeated_above_raised", checks: []algorithms.Check{c(fw, 8, 5), c(fw, 8, 4)}, cost: 4, comb: 9, judged: 8},
		{name: "unjudged_then_raised_above", checks: []algorithms.Check{c(fw, 0, 5), c(fw, 9, 5)}, cost: 5, comb: 10, judged: 9},
		{name: "raised_then_unjudged_above", checks: []algorithms.Check{c(fw, 9, 4), c(fw, 0, 2)}, cost: 2, comb: 6, judged: 5},
		{name: "spec_before_limit", checks: []algorithms.Check{c(bad, 3, 1)}, field: "Limit"},
		{name: "cost_above_judged", checks: []algorithms.Check{c(fw, 3, 4)}, cost: 4, judged: 3},
		{name: "cost_negative_judged", checks: []algorithms.Check{c(fw, 3, -1)}, cost: -1, judged: 3},
		{name: "repeated_above_judged", checks: []algorithms.Check{c(fw, 3, 2), c(fw, 3, 2)}, cost: 2, comb: 4, judged: 3},
		{name: "unjudged_then_judged_above", checks: []algorithms.Check{c(fw, 0, 3), c(fw, 3, 0)}, cost: 0, comb: 4, judged: 3},
		{name: "repeated_at_spec_then_judged", checks: []algorithms.Check{c(fw, 5, 1), c(fw, 4, 1), c(fw, 2, 1)}, cost: 1, comb: 3, judged: 2},
	}
	for _, s := range buckets {
		cases = append(cases,
			errCase{name: "limit_on_" + string(s.Algorithm), checks: []algorithms.Check{c(s, 3, 1)}, field: "Check.Limit"},
			errCase{name: "limit_at_spec_on_" + string(s.Algorithm), checks: []algorithms.Check{c(s, s.Limit, 1)}, field: "Check.Limit"})
	}
	valid := algorithms.Check{Spec: fw, Key: "valid"}
	for _, tc := range cases {
		t.Run("invalid/"+tc.name, func(t *testing.T) {
			e := newEnv(t, h)
			want := algorithms.ValidateChecks(tc.checks)
			var se *algorithms.SpecError
			var ce *algorithms.CostError
			switch {
			case want == nil:
				t.Fatalf("ValidateChecks(%s) = nil: the case is valid", formatChecks(tc.checks))
			case tc.field != "" && (!errors.As(want, &se) || se.Field != tc.field):
				t.Fatalf("ValidateChecks(%s) = %v, want a *SpecError naming %q", formatChecks(tc.checks), want, tc.field)
			case tc.field == "" && (!errors.As(want, &ce) || ce.Cost != tc.cost || ce.Combined != tc.comb || ce.Spec != judged(algorithms.Check{Spec: fw}, tc.judged).Judged()):
				t.Fatalf("ValidateChecks(%s) = %#v, want a *CostError of cost %d, combined %d, naming the Spec judged at %d", formatChecks(tc.checks), want, tc.cost, tc.comb, tc.judged)
			}
			same := func(call string, err error) {
				t.Helper()
				if !reflect.DeepEqual(err, want) {
					t.Errorf("%s(%s): %v; want ValidateChecks' error, %v", call, formatChecks(tc.checks), err, want)
				}
			}
			calls := [][]algorithms.Check{tc.checks, append([]algorithms.Check{valid}, tc.checks...), append(append([]algorithms.Check(nil), tc.checks...), valid)}
			for _, call := range calls {
				ds, err := e.store.Take(e.ctx, call...)
				if err == nil {
					t.Fatalf("Take(%s) = %+v, nil; want an error", formatChecks(call), ds)
				}
				same("Take", err)
				_, merr := e.model.TakeAt(Base, call...)
				same("model: Take", merr)
				if pk, ok := e.store.(algorithms.Peeker); ok {
					same("Peek", pk.Peek(e.ctx, make([]algorithms.Decision, len(call)), call))
				}
				ds = make([]algorithms.Decision, len(call))
				for i := range ds {
					ds[i] = algorithms.Decision{Allowed: true, Limit: call[i].Spec.Capacity()}
				}
				if gb, ok := e.store.(algorithms.GiveBacker); ok {
					same("GiveBack", gb.GiveBack(e.ctx, make([]algorithms.Refunded, len(call)), call, ds, 0))
				}
				if rf, ok := e.store.(algorithms.Refunder); ok && tc.checks[0].Spec.Algorithm == algorithms.LeakyQueue {
					same("Refund", rf.Refund(e.ctx, make([]algorithms.Refunded, len(call)), call, ds, 0))
				}
			}
			if d := e.take(0, valid)[0]; d.Remaining != fw.Limit-1 {
				t.Errorf("after the invalid calls, %s has Remaining %d, want %d: an invalid call consumed", formatCheck(valid), d.Remaining, fw.Limit-1)
			}
			if tc.checks[0].Spec == fw {
				if d := e.take(0, c(fw, 0, 5))[0]; !d.Allowed {
					t.Errorf("after the invalid calls, 5 of %s = %+v, want admitted: an invalid call consumed", formatCheck(tc.checks[0]), d)
				}
			}
		})
	}
	// The same on a key already held, which a store may decide in place
	// (MemoryStore.TakeOne's path for a held key): an invalid Limit or
	// cost is the same error, and consumes nothing.
	held := []algorithms.Spec{fw, log,
		{Algorithm: algorithms.SlidingWindow, Limit: 5, Window: time.Second},
		{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: time.Second, Buckets: 5},
	}
	for _, spec := range held {
		t.Run("invalid/held_key/"+string(spec.Algorithm), func(t *testing.T) {
			e := newEnv(t, h)
			e.take(0, c(spec, 0, 1))
			calls := [][]algorithms.Check{
				{c(spec, -1, 1)},
				{c(spec, algorithms.MaxLimit+1, 1)},
				{c(spec, 8, 9)}, // cost above the judged limit
				{c(spec, 3, 4)},
			}
			if !spec.Algorithm.Raisable() {
				calls = append(calls, []algorithms.Check{c(spec, spec.Limit+1, 1)})
			}
			for _, call := range calls {
				want := algorithms.ValidateChecks(call)
				if want == nil {
					t.Fatalf("ValidateChecks(%s) = nil: the case is valid", formatChecks(call))
				}
				if ds, err := e.store.Take(e.ctx, call...); !reflect.DeepEqual(err, want) {
					t.Errorf("Take(%s) on a held key = %+v, %v; want ValidateChecks' error, %v", formatChecks(call), ds, err, want)
				}
			}
			if d := e.take(0, c(spec, 0, 4))[0]; !d.Allowed || d.Remaining != 0 {
				t.Errorf("after the invalid calls on the held key, 4 of %s = %+v, want admitted with 0 left: an invalid call consumed", spec, d)
			}
		})
	}
	t.Run("invalid/within_range_is_valid", func(t *testing.T) {
		e := newEnv(t, h)
		for i, call := range [][]algorithms.Check{
			{c(fw, 3, 3)},                                 // cost at the judged limit
			{c(fw, 5, 5)},                                 // at Spec.Limit
			{c(fw, 3, 1), c(fw, 0, 4)},                    // 5 together, the last judged at 5
			{c(fw, 2, 1), c(fw, 2, 1)},                    // 2 together at 2
			{c(fw, 1, 0), {Spec: fw, Key: "j", Limit: 1}}, // another key
			{c(fw, 8, 8)},                                 // cost at a raised limit
			{c(fw, 0, 5), c(fw, 10, 5)},                   // 10 together, the last raised to 10
			{c(fw, algorithms.MaxLimit, algorithms.MaxLimit)},
			{c(log, 5, 5)}, // sliding_log at Spec.Limit
		} {
			if ds := e.take(time.Duration(i)*time.Hour, call...); !allAllowed(ds) {
				t.Errorf("Take(%s) on a fresh window = %+v, want admitted", formatChecks(call), ds)
			}
		}
	})
}

// judgedTraceSpecs are the specs of Judged/traces: each window kind, small
// limits (big false) or near MaxLimit, and a bucket and a queue, never
// judged, on the same keys.
func judgedTraceSpecs(big bool) []algorithms.Spec {
	if big {
		return []algorithms.Spec{
			{Algorithm: algorithms.FixedWindow, Limit: algorithms.MaxLimit - 7, Window: 10 * time.Second},
			{Algorithm: algorithms.SlidingWindow, Limit: algorithms.MaxLimit - 3, Window: 10 * time.Second},
			{Algorithm: algorithms.SlidingWindow, Limit: 999_999_937, Window: 7*time.Second + 13},
			{Algorithm: algorithms.SlidingBuckets, Limit: algorithms.MaxLimit, Window: 9 * time.Second, Buckets: 3},
			{Algorithm: algorithms.SlidingLog, Limit: algorithms.MaxLimit, Window: 10 * time.Second},
			{Algorithm: algorithms.TokenBucket, Limit: 999_999_937, Window: 7*time.Second + 3, Burst: algorithms.MaxLimit},
		}
	}
	return []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 8, Window: 10 * time.Second},
		{Algorithm: algorithms.SlidingLog, Limit: 8, Window: 10 * time.Second},
		{Algorithm: algorithms.SlidingWindow, Limit: 8, Window: 10 * time.Second},
		{Algorithm: algorithms.SlidingBuckets, Limit: 8, Window: 10 * time.Second, Buckets: 5},
		{Algorithm: algorithms.FixedWindow, Limit: 3, Window: 7 * time.Second},
		{Algorithm: algorithms.SlidingWindow, Limit: 7, Window: 7 * time.Second},
		{Algorithm: algorithms.SlidingLog, Limit: 3, Window: 3 * time.Second},
		{Algorithm: algorithms.SlidingBuckets, Limit: 9, Window: 9 * time.Second, Buckets: 3},
		{Algorithm: algorithms.TokenBucket, Limit: 2, Window: 10 * time.Second, Burst: 5},
		{Algorithm: algorithms.LeakyQueue, Limit: 3, Window: 10 * time.Second, MaxDelay: 17 * time.Second},
	}
}

// judgedTrace replays random calls of up to 11 checks on two keys, each
// check of a window kind judged at a random limit half the time (see
// randomLimit), costs up to the limit it is judged at (a few past it, and
// a third of the calls not brought within what a key admits at once),
// the instant now and then going back: Peek, Take (every other call
// through TakeInto, for an algorithms.IntoStore), then GiveBack or
// Refund of the admitted ones, are the Model's, errors included, and
// every decision is sane (see saneDecision).
func judgedTrace(t *testing.T, h Harness, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0x1d9ed))
	runModelTrace(t, h, r, judgedTraceSpecs(seed%4 == 3), modelTrace{
		check: func(r *rand.Rand, s algorithms.Spec) algorithms.Check {
			c := algorithms.Check{Spec: s, Key: fmt.Sprint("k", r.IntN(2)), Limit: randomLimit(r, s)}
			c.Cost = r.Int64N(c.Judged().Capacity() + 1)
			if r.IntN(15) == 0 {
				c.Cost = c.Judged().Capacity() + 1 // refused
			}
			return c
		},
		exact: true,
		into:  true,
		ops:   3,
	})
}
