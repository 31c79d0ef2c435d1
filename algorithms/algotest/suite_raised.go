package algotest

import (
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// runRaised checks [algorithms.Check.Limit] above the Spec's limit, for
// the kinds [algorithms.Kind.Raisable] reports (fixed_window,
// sliding_window, sliding_buckets): a limit raised within the window is
// judged on the state kept under the Spec, so a client that used 100 of
// 100 gets 10 more at 110, not a fresh 110. Each case is worked out by
// hand and every decision is also the Model's (but in concurrency's and
// max_keys' floods):
//
//   - raised/<kind>: 100 of 100 used at +10 s, unit requests judged at 110
//     at +20 s: exactly 10 admitted, then denied;
//   - raised_restored/<kind>: judged at 110 up to 110 counted, then at
//     Spec.Limit (Limit 0, or 100): denied with Remaining 0 until the
//     window frees room below 100, and admitted from that instant on, not
//     a nanosecond before;
//   - raised_all_or_nothing/<kind>: a raised check that fails denies its
//     Take, and nothing is consumed (and the other way round);
//   - raised_concurrency/<kind>: 64 goroutines judged at 150 on a key that
//     used 100 of 100 admit exactly 50;
//   - raised_max_keys/<kind>: a key held past its Spec's limit at a
//     raised one is not evicted by a flood of keys that each use all of
//     their Spec's limit (see judgedRaisedMaxKeys for the rule);
//   - raised_giveback/<kind>: units taken at a raised limit, given back,
//     leave the key's count where it was before them; after a Reset and
//     a smaller Take, giving back a raised Take from before the Reset
//     empties the count, never below 0 (a store that let it wrap would
//     deny every request of the window).
func runRaised(t *testing.T, h Harness, spec algorithms.Spec) {
	kind := string(spec.Algorithm)
	t.Run("raised/"+kind, func(t *testing.T) { judgedRaised(t, h, spec) })
	t.Run("raised_restored/"+kind, func(t *testing.T) { judgedRaisedRestored(t, h, spec) })
	t.Run("raised_all_or_nothing/"+kind, func(t *testing.T) { judgedRaisedAllOrNothing(t, h, spec) })
	t.Run("raised_concurrency/"+kind, func(t *testing.T) { judgedRaisedConcurrency(t, h, spec) })
	t.Run("raised_max_keys/"+kind, func(t *testing.T) { judgedRaisedMaxKeys(t, h, spec) })
	t.Run("raised_giveback/"+kind, func(t *testing.T) { judgedRaisedGiveBack(t, h, spec) })
}

// judgedRaised: the reverse of the case. A key that took 100 of
// 100 at +10 s is judged at 110 at +20 s (a limit raised within the
// window): exactly 10 unit requests are admitted, not a fresh 110, and
// the 11th is denied (see judgedWant: used 100, limit 110). A Peek before
// each reports what the Take then decides.
func judgedRaised(t *testing.T, h Harness, spec algorithms.Spec) {
	e := newEnv(t, h)
	pk, _ := e.store.(algorithms.Peeker)
	k := algorithms.Check{Spec: spec, Key: "k"}
	e.take(10*time.Second, algorithms.Check{Spec: spec, Key: "k", Cost: 100})
	for i := int64(1); i <= 11; i++ {
		want := judgedWant(spec.Algorithm, 100, 110, i)
		if pk != nil {
			p := peekBoth(t, e.clock, pk, e.model, Base.Add(20*time.Second), []algorithms.Check{judged(k, 110)})[0]
			wantRem := int64(0) // a Peek of a request the Take admits reports one unit more
			if want.Allowed {
				wantRem = want.Remaining + 1
			}
			if p.Allowed != want.Allowed || p.Limit != 110 || p.Remaining != wantRem {
				t.Errorf("%s, %d taken: Peek of a unit request judged at 110 at +20s = %+v, want it deciding as the Take, %+v", spec, 100+i-1, p, want)
			}
		}
		if got := e.take(20*time.Second, judged(k, 110))[0]; got != want {
			t.Errorf("%s, 100 taken at +10s: unit request %d judged at 110 at +20s = %+v, want %+v", spec, i, got, want)
		}
	}
}

// raisedRestoredWant returns, for a key of spec (one of judgedSpecs) that
// took 100 at +10 s and 10 judged at 110 at +20 s, the decision at +20 s of
// a unit request at Spec.Limit, and the wait after which it is admitted,
// worked out by hand:
//
//   - fixed_window: the 110 leave with the window, at +60 s;
//   - sliding_window: the 110 of the window of +0 s weigh
//     110·(60 s − e')/60 s in the next one, at most 99 from e' = 6 s on:
//     46 s (not the 40 s + ceil(60 s/110) of a count within the limit);
//   - sliding_buckets: the 100 of the sub-window of +10 s leave at +70 s
//     (10 left), the 10 of +20 s at +80 s.
func raisedRestoredWant(kind algorithms.Kind) algorithms.Decision {
	const s = time.Second
	d := algorithms.Decision{Limit: 100}
	switch kind {
	case algorithms.FixedWindow:
		d.RetryAfter, d.ResetAfter, d.NextAfter = 40*s, 40*s, 40*s
	case algorithms.SlidingWindow:
		d.RetryAfter, d.ResetAfter, d.NextAfter = 46*s, 100*s, 46*s
	case algorithms.SlidingBuckets:
		d.RetryAfter, d.ResetAfter, d.NextAfter = 50*s, 60*s, 50*s
	}
	return d
}

// judgedRaisedRestored: a key that took 100 of 100 takes 10 judged at
// 110; at its Spec's limit again (Limit 0, or Spec.Limit), it sees all
// 110 counted: denied with Remaining 0 and the waits of
// raisedRestoredWant, a nanosecond before RetryAfter still denied, and at
// RetryAfter admitted; judged at 110 again meanwhile, denied too.
func judgedRaisedRestored(t *testing.T, h Harness, spec algorithms.Spec) {
	e := newEnv(t, h)
	k := algorithms.Check{Spec: spec, Key: "k"}
	e.take(10*time.Second, algorithms.Check{Spec: spec, Key: "k", Cost: 100})
	ten := judged(k, 110)
	ten.Cost = 10
	if d := e.take(20*time.Second, ten)[0]; !d.Allowed || d.Limit != 110 || d.Remaining != 0 {
		t.Fatalf("%s, 100 taken: cost 10 judged at 110 = %+v, want admitted with Remaining 0 of 110", spec, d)
	}
	want := raisedRestoredWant(spec.Algorithm)
	pk, _ := e.store.(algorithms.Peeker)
	for _, c := range []algorithms.Check{k, judged(k, 100)} {
		if pk != nil {
			if p := peekBoth(t, e.clock, pk, e.model, Base.Add(20*time.Second), []algorithms.Check{c})[0]; p != want {
				t.Errorf("%s, 110 taken at 110: Peek(%s) at +20s = %+v, want %+v", spec, formatCheck(c), p, want)
			}
		}
		if d := e.take(20*time.Second, c)[0]; d != want {
			t.Errorf("%s, 110 taken at 110: Take(%s) at +20s = %+v, want %+v", spec, formatCheck(c), d, want)
		}
	}
	if d := e.take(20*time.Second, judged(k, 110))[0]; d.Allowed || d.Remaining != 0 {
		t.Errorf("%s, 110 taken at 110: judged at 110 again = %+v, want denied with Remaining 0", spec, d)
	}
	at := 20*time.Second + want.RetryAfter
	if d := e.take(at-1, k)[0]; d.Allowed {
		t.Errorf("%s, 110 taken at 110: at +%v, a nanosecond before RetryAfter = %+v, want denied", spec, at-1, d)
	}
	if d := e.take(at, k)[0]; !d.Allowed || d.Limit != 100 {
		t.Errorf("%s, 110 taken at 110: at +%v, RetryAfter = %+v, want admitted", spec, at, d)
	}
}

// judgedRaisedAllOrNothing: on a key that took 100 of 100, a check of 11
// judged at 110 fails and denies its Take, whose other check consumes
// nothing; an unjudged check of the key that fails, with one judged at
// 110 after it that passes, the same; a check judged at 110 that passes
// beside an exhausted key, the same; and then 10 judged at 110 are
// admitted, down to 0.
func judgedRaisedAllOrNothing(t *testing.T, h Harness, spec algorithms.Spec) {
	e := newEnv(t, h)
	k := func(limit, cost int64) algorithms.Check {
		return algorithms.Check{Spec: spec, Key: "k", Cost: cost, Limit: limit}
	}
	e.take(10*time.Second, k(0, 100))
	p := algorithms.Check{Spec: spec, Key: "p"}
	ds := e.take(20*time.Second, p, k(110, 11))
	if !ds[0].Allowed || ds[1].Allowed || ds[0].Remaining != 100 || ds[1].Limit != 110 || ds[1].Remaining != 10 {
		t.Fatalf("%s: Take(p, 11 of k at 110) with 100 of k taken = %+v; want p passing as it is (100 left), the judged check denied (10 of 110 left)", spec, ds)
	}
	if d := e.take(20*time.Second, p)[0]; d.Remaining != 99 {
		t.Errorf("%s: p after the denied Take: %+v, want Remaining 99: the denied Take consumed", spec, d)
	}
	// The key unjudged first: denied; the raised check after it passes,
	// reporting the key as it is (10 of 110 left), and nothing is consumed.
	ds = e.take(20*time.Second, k(0, 5), k(110, 5))
	if ds[0].Allowed || ds[0].Limit != 100 || ds[0].Remaining != 0 || !ds[1].Allowed || ds[1].Limit != 110 || ds[1].Remaining != 10 {
		t.Errorf("%s: Take(5 of k, 5 of k at 110) with 100 taken = %+v; want the first denied (0 of 100 left), the second passing as k is (10 of 110 left)", spec, ds)
	}
	closed := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: "closed"}
	e.take(20*time.Second, closed)
	if ds := e.take(20*time.Second, k(110, 10), closed); !ds[0].Allowed || ds[0].Remaining != 10 || ds[1].Allowed {
		t.Errorf("%s: Take(10 of k at 110, an exhausted key) = %+v; want the first passing as k is (10 of 110 left), the second denied", spec, ds)
	}
	ds = e.take(20*time.Second, k(110, 5), k(110, 5))
	if !allAllowed(ds) || ds[0].Remaining != 5 || ds[1].Remaining != 0 {
		t.Errorf("%s: Take(5 of k at 110, 5 of k at 110) after the denied Takes = %+v; want both admitted, 5 then 0 of 110 left: a denied Take consumed", spec, ds)
	}
}

// judgedRaisedConcurrency: 64 goroutines at one frozen instant, each making
// unit requests judged at 150 on a key that took 100 of 100, admit
// exactly 50, each seeing the one before it; the key then holds 150, and
// a request at its Spec's limit is denied.
func judgedRaisedConcurrency(t *testing.T, h Harness, spec algorithms.Spec) {
	store := judgedHammer(t, h, spec, 100, 150)
	ds, err := store.Take(t.Context(), algorithms.Check{Spec: spec, Key: "hot"})
	if err != nil {
		t.Fatal(err)
	}
	if ds[0].Allowed || ds[0].Remaining != 0 || ds[0].Limit != 100 {
		t.Errorf("%s: unjudged after 150 taken at 150: %+v, want denied with 0 of 100 left", spec, ds[0])
	}
}

// judgedRaisedMaxKeys: the rule of a bounded store for a key held past
// its Spec's limit at a raised one. Eviction weighs each key's share in
// use of the capacity its Spec's keys are reckoned at (see
// algorithms.MemoryStore): a key's share is everything its state counts,
// which a raised limit may take above the Spec's limit, so above 1, and
// such a key is the last of its Spec's keys to go: a flood displaces it
// only with keys that each count at least as much, which no key checked
// at its Spec's own limit, at most all of it, does. So a key that used 15
// of its Spec's 10 at 20 is not evicted by a flood of keys that each used
// all 10 at the Spec's limit (a tie at 1 would leave the choice to the
// sample), nor by keys that made one request at 20: it decides as the
// Model after them.
func judgedRaisedMaxKeys(t *testing.T, h Harness, spec algorithms.Spec) {
	spec.Limit = 10
	victim := algorithms.Check{Spec: spec, Key: "victim", Cost: 5}
	floodSpares(t, h, spec, []algorithms.Check{victim, judged(victim, 20), judged(victim, 20)}, true,
		func(i int) algorithms.Check {
			c := algorithms.Check{Spec: spec, Key: fmt.Sprint("flood-", i), Cost: 10}
			if i%4 == 3 {
				c.Cost, c.Limit = 1, 20
			}
			return c
		},
		[]algorithms.Check{judged(algorithms.Check{Spec: spec, Key: "victim"}, 20), {Spec: spec, Key: "victim"}},
		"keys each using all of the limit")
}

// judgedRaisedGiveBack: a key that took 100 of 100 at +10 s takes 10
// judged at 110 at +20 s and gives them back at +21 s: given, reported at
// 110 with 10 left, and at its Spec's limit the key still holds its 100
// (denied). It takes 5 at 110 at +22 s (105 counted); a Reset at +23 s
// forgets it, and it takes 3 at +24 s. Giving back the 5 at +25 s (their
// window, or sub-window, is still the key's) drops the count by what it
// holds, 3, to 0, never below: reported at 110 with all 110 left, and 100
// then admitted at the Spec's limit, the next unit denied. Every decision
// is also the Model's.
func judgedRaisedGiveBack(t *testing.T, h Harness, spec algorithms.Spec) {
	const s = time.Second
	re := newResetEnv(t, h)
	gb, ok := re.store.(algorithms.GiveBacker)
	if !ok {
		t.Skipf("the store (%T) does not implement algorithms.GiveBacker", re.store)
	}
	k := func(limit, cost int64) algorithms.Check {
		return algorithms.Check{Spec: spec, Key: "k", Cost: cost, Limit: limit}
	}
	re.take(10*s, k(0, 100))
	ten := []algorithms.Check{k(110, 10)}
	got := giveBackBoth(t, re.clock, gb, re.model, 21*s, s, ten, re.take(20*s, ten...))
	if !got[0].Given || !got[0].Allowed || got[0].Limit != 110 || got[0].Remaining != 10 {
		t.Errorf("%s, 100 taken: 10 judged at 110 given back = %+v, want given, reported at 110 with 10 left", spec, got[0])
	}
	if d := re.take(21*s, k(0, 1))[0]; d.Allowed || d.Remaining != 0 {
		t.Errorf("%s, 100 taken, 10 at 110 given back: a unit at the Spec's limit = %+v, want denied with 0 left", spec, d)
	}
	five := []algorithms.Check{k(110, 5)}
	ds := re.take(22*s, five...)
	if !ds[0].Allowed || ds[0].Remaining != 5 {
		t.Fatalf("%s, 100 taken: 5 judged at 110 = %+v, want admitted with 5 left", spec, ds[0])
	}
	re.mustReset(23*s, k(0, 1))
	if d := re.take(24*s, k(0, 3))[0]; !d.Allowed || d.Remaining != 97 {
		t.Fatalf("%s, reset: 3 taken = %+v, want admitted with 97 left", spec, d)
	}
	got = giveBackBoth(t, re.clock, gb, re.model, 25*s, 3*s, five, ds)
	if !got[0].Given || !got[0].Allowed || got[0].Limit != 110 || got[0].Remaining != 110 {
		t.Errorf("%s, 5 taken at 110, reset, 3 taken: the 5 given back = %+v, want given (the 3), reported at 110 with 110 left", spec, got[0])
	}
	if d := re.take(25*s, k(0, 100))[0]; !d.Allowed || d.Remaining != 0 {
		t.Errorf("%s, the count given back to 0: 100 at the Spec's limit = %+v, want admitted with 0 left (a count given back below 0?)", spec, d)
	}
	if d := re.take(25*s, k(0, 1))[0]; d.Allowed {
		t.Errorf("%s, 100 taken after the give-back: a unit = %+v, want denied", spec, d)
	}
}
