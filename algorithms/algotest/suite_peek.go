package algotest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// Steps of the random traces of Peek/traces and Peek/skew: each step is
// peeked once or twice besides its Take, so they are shorter than
// ModelTraces'.
const (
	peekSteps     = 400
	peekSkewSteps = 300
)

// runPeek checks [algorithms.Peeker.Peek]:
//
//   - traces/seed=<n>, skew/seed=<n>: random traces (skew: with instants
//     that go back) where every step's checks are peeked at its instant
//     before its Take, and now and then at a later instant too: every
//     Peek is the Model's ([Model.PeekAt]); each check first on its key
//     in its step is admitted by the Peek exactly when the Take admits it,
//     and reported as the Take reports it when denied (and, the Take being
//     denied by another check, as the Take reports it bar the Delay); and
//     the Takes' decisions are the Model's, which never saw the peeks: a
//     Peek changed no state;
//   - ahead/<kind>: a Peek windows ahead of a key's newest instant leaves
//     a later Take at an earlier instant deciding as without it (a pruned
//     log or rolled ring would show);
//   - unknown_key/<kind>: a Peek of a key the store does not hold reports
//     a fresh key and makes none (a store with a Len method holds as many
//     keys; a key made at a later instant would decide a Take at an
//     earlier one late);
//   - one_key_twice: two checks of one key are each decided alone;
//   - invalid_in_middle/<case>: an invalid check among valid ones is the
//     error Take returns, and nothing changes;
//   - context, closed, dst_length: a done context is returned as is, a
//     closed store fails with algorithms.ErrClosed, a dst of the wrong
//     length is an error.
//
// A store that is not a Peeker skips, saying so.
func runPeek(t *testing.T, h Harness) {
	if _, ok := h.New(t, NewClock(Base)).(algorithms.Peeker); !ok {
		t.Skip("the store does not implement algorithms.Peeker")
	}
	for seed := range uint64(traces(t)) {
		t.Run(fmt.Sprintf("traces/seed=%d", seed), func(t *testing.T) {
			peekTrace(t, h, RandomTrace(seed, peekSteps))
		})
	}
	for seed := range uint64(max(1, traces(t)/2)) {
		t.Run(fmt.Sprintf("skew/seed=%d", seed), func(t *testing.T) {
			peekTrace(t, h, RandomSkewTrace(seed, peekSkewSteps))
		})
	}
	for _, spec := range kindSpecs(4) {
		t.Run("ahead/"+string(spec.Algorithm), func(t *testing.T) { peekAhead(t, h, spec) })
		t.Run("unknown_key/"+string(spec.Algorithm), func(t *testing.T) { peekUnknown(t, h, spec) })
	}
	t.Run("one_key_twice", func(t *testing.T) { peekOneKeyTwice(t, h) })
	peekInvalid(t, h)
	peekCalls(t, h)
}

// peekEnv is an env whose store is a Peeker.
type peekEnv struct {
	*env
	pk algorithms.Peeker
}

func newPeekEnv(t *testing.T, h Harness) *peekEnv {
	e := newEnv(t, h)
	return &peekEnv{e, e.store.(algorithms.Peeker)}
}

// peek peeks checks at Base+at on the store and on the Model, fails the
// test on an error or when they disagree, and returns the store's
// decisions.
func (e *peekEnv) peek(at time.Duration, checks ...algorithms.Check) []algorithms.Decision {
	e.t.Helper()
	return peekBoth(e.t, e.clock, e.pk, e.model, Base.Add(at), checks)
}

// peekBoth peeks checks at now on store and on model and requires the
// same decisions.
func peekBoth(t *testing.T, clock *Clock, store algorithms.Peeker, model *Model, now time.Time, checks []algorithms.Check) []algorithms.Decision {
	t.Helper()
	clock.Set(now)
	got := make([]algorithms.Decision, len(checks))
	if err := store.Peek(t.Context(), got, checks); err != nil {
		t.Fatalf("Peek(%s) at %v: %v", formatChecks(checks), now, err)
	}
	want, err := model.PeekAt(now, checks...)
	if err != nil {
		t.Fatalf("model: Peek(%s) at %v: %v", formatChecks(checks), now, err)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("Peek(%s) at %v, check %d: decisions differ from the model:\n\tgot  %+v\n\twant %+v", formatChecks(checks), now, i, got[i], want[i])
		}
	}
	return got
}

// peekTrace replays tr with peeks (see runPeek). It stops at the first
// step with a difference.
func peekTrace(t *testing.T, h Harness, tr Trace) {
	clock := NewClock(tr.Start)
	store := h.New(t, clock)
	pk := store.(algorithms.Peeker)
	model := NewModel()
	rng := rand.New(rand.NewPCG(tr.Seed, 0x9ee4))
	for i, st := range tr.Steps {
		now := tr.Start.Add(st.At)
		if rng.IntN(4) == 0 {
			// A look ahead first, by up to three of the step's longest
			// windows: the Take after it, back at now, must not see it.
			var w time.Duration
			for _, c := range st.Checks {
				w = max(w, c.Spec.Window)
			}
			peekBoth(t, clock, pk, model, now.Add(time.Duration(rng.Int64N(3*int64(w)+1))), st.Checks)
		}
		ps := peekBoth(t, clock, pk, model, now, st.Checks)
		clock.Set(now)
		ds, err := store.Take(t.Context(), st.Checks...)
		if err != nil {
			t.Fatalf("step %d of %s: Take: %v", i, tr.name(), err)
		}
		want, err := model.TakeAt(now, st.Checks...)
		if err != nil {
			t.Fatalf("step %d of %s: model: %v", i, tr.name(), err)
		}
		all := true
		for j := range ds {
			all = all && ds[j].Allowed
			if ds[j] != want[j] {
				t.Fatalf("step %d of %s: after peeks, Take(%s) check %d differs from the model (which saw no peek):\n\tgot  %+v\n\twant %+v",
					i, tr.name(), formatChecks(st.Checks), j, ds[j], want[j])
			}
		}
		for j, c := range st.Checks {
			first := true
			for k := range j {
				first = first && (st.Checks[k].Spec != c.Spec || st.Checks[k].Key != c.Key)
			}
			if !first {
				continue // the Take decided it after the earlier check's consumption
			}
			p, d := ps[j], ds[j]
			switch {
			case p.Allowed != d.Allowed:
				t.Fatalf("step %d of %s, check %d (%s): Peek allowed=%v, Take allowed=%v", i, tr.name(), j, formatCheck(c), p.Allowed, d.Allowed)
			case !d.Allowed && p != d:
				t.Fatalf("step %d of %s, check %d (%s): denied, Peek %+v, Take %+v", i, tr.name(), j, formatCheck(c), p, d)
			case !all:
				// A denied Take reports a passing check as decided alone, without its Delay.
				if p.Delay = 0; p != d {
					t.Fatalf("step %d of %s, check %d (%s): passes in a denied Take: Peek %+v, Take %+v", i, tr.name(), j, formatCheck(c), ps[j], d)
				}
			case p.Delay != d.Delay:
				t.Fatalf("step %d of %s, check %d (%s): admitted, Peek's Delay %v, Take's %v", i, tr.name(), j, formatCheck(c), p.Delay, d.Delay)
			}
		}
	}
}

// peekAhead: a key that took at +1s, peeked 1 ns before and after every
// boundary of its next three windows, then taken at +1s again, decides
// as the Model, which saw no peek.
func peekAhead(t *testing.T, h Harness, spec algorithms.Spec) {
	e := newPeekEnv(t, h)
	c := algorithms.Check{Spec: spec, Key: "k"}
	e.take(time.Second, c)
	e.take(time.Second+time.Millisecond, c)
	for k := range 4 {
		at := time.Second + time.Duration(k)*spec.Window
		e.peek(at-time.Nanosecond, c)
		e.peek(at+time.Nanosecond, c)
		e.peek(at+spec.Window/2, c)
	}
	// Back before the peeks: as if they never were.
	e.take(time.Second+2*time.Millisecond, c)
	e.take(time.Second+2*time.Millisecond, c, c)
	e.peek(time.Second+2*time.Millisecond, c)
}

// peekUnknown: peeking keys the store does not hold, now and windows
// ahead, among keys it holds, reports fresh keys and makes none.
func peekUnknown(t *testing.T, h Harness, spec algorithms.Spec) {
	e := newPeekEnv(t, h)
	held := algorithms.Check{Spec: spec, Key: "held"}
	e.take(time.Second, held)
	// Keys of spec beside the unknown ones (in every shard of a sharded
	// store, most likely).
	for i := range 256 {
		e.take(time.Second, algorithms.Check{Spec: spec, Key: fmt.Sprint("held-", i)})
	}
	lener, hasLen := e.store.(interface{ Len() int })
	var before int
	if hasLen {
		before = lener.Len()
	}
	unknown := algorithms.Check{Spec: spec, Key: "unknown", Cost: 2}
	other := spec
	if spec.Algorithm == algorithms.LeakyQueue {
		other.MaxDelay += time.Second
	} else {
		other.Limit++
	}
	// The held key under another Spec is unknown too.
	heldOther := algorithms.Check{Spec: other, Key: "held"}
	for _, at := range []time.Duration{time.Second, time.Second + 3*spec.Window + spec.Window/3} {
		for i, d := range e.peek(at, unknown, heldOther) {
			full := capacity([]algorithms.Spec{spec, other}[i])
			if !d.Allowed || d.Limit != full || d.Remaining != full || d.ResetAfter != 0 || d.NextAfter != 0 || d.Delay != 0 || d.RetryAfter != 0 {
				t.Errorf("Peek of an unknown key at +%v = %+v, want a fresh key's decision", at, d)
			}
		}
	}
	if hasLen {
		if got := lener.Len(); got != before {
			t.Errorf("Len() = %d after peeks of unknown keys, was %d", got, before)
		}
	}
	// A key made windows ahead would decide these Takes late.
	e.take(time.Second+time.Millisecond, unknown)
	e.take(time.Second+time.Millisecond, heldOther)
	e.take(time.Second+time.Millisecond, held)
}

// peekOneKeyTwice: two checks of one key, which together exceed what it
// has left, are each admitted by a Peek (each decided alone), where a Take
// of both is denied.
func peekOneKeyTwice(t *testing.T, h Harness) {
	for _, spec := range kindSpecs(4) {
		t.Run(string(spec.Algorithm), func(t *testing.T) {
			e := newPeekEnv(t, h)
			two := algorithms.Check{Spec: spec, Key: "k", Cost: 2}
			e.take(time.Second, two)
			ps := e.peek(time.Second, two, two)
			if !ps[0].Allowed || ps[0] != ps[1] {
				t.Errorf("Peek of one key twice = %+v, %+v: want both admitted, alike", ps[0], ps[1])
			}
			if ds := e.take(time.Second, two, two); ds[1].Allowed {
				t.Errorf("Take of the same two checks admitted both: %+v", ds)
			}
		})
	}
}

// peekInvalid: an invalid check in the middle of valid ones is the error
// Take returns (the field named), and changes nothing.
func peekInvalid(t *testing.T, h Harness) {
	fw := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Second}
	cases := []struct {
		name string
		bad  algorithms.Check
		want error
	}{
		{"limit_zero", algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Window: time.Second}, Key: "k"}, algorithms.ErrInvalidSpec},
		{"kind_unknown", algorithms.Check{Spec: algorithms.Spec{Algorithm: "gcra", Limit: 5, Window: time.Second}, Key: "k"}, algorithms.ErrInvalidSpec},
		{"cost_negative", algorithms.Check{Spec: fw, Key: "k", Cost: -1}, algorithms.ErrInvalidCost},
		{"cost_above_capacity", algorithms.Check{Spec: fw, Key: "k", Cost: 6}, algorithms.ErrInvalidCost},
	}
	for _, tc := range cases {
		t.Run("invalid_in_middle/"+tc.name, func(t *testing.T) {
			e := newPeekEnv(t, h)
			good := algorithms.Check{Spec: fw, Key: "k"}
			e.take(time.Second, good)
			e.clock.Set(Base.Add(time.Second))
			dst := make([]algorithms.Decision, 3)
			err := e.pk.Peek(t.Context(), dst, []algorithms.Check{good, tc.bad, {Spec: fw, Key: "other"}})
			_, takeErr := e.store.Take(t.Context(), good, tc.bad)
			switch {
			case err == nil:
				t.Fatalf("Peek with %s in the middle: no error", formatCheck(tc.bad))
			case !errors.Is(err, tc.want):
				t.Fatalf("Peek with %s in the middle: %v, want an error matching %v", formatCheck(tc.bad), err, tc.want)
			case takeErr == nil || err.Error() != takeErr.Error():
				t.Fatalf("Peek with %s in the middle: %v; Take's error: %v", formatCheck(tc.bad), err, takeErr)
			}
			var se *algorithms.SpecError
			var ce *algorithms.CostError
			if !errors.As(err, &se) && !errors.As(err, &ce) {
				t.Fatalf("Peek error %v (%T) is neither a *SpecError nor a *CostError", err, err)
			}
			e.take(time.Second, good)
			e.take(time.Second, algorithms.Check{Spec: fw, Key: "other"})
		})
	}
}

// peekCalls: a done context, a closed store, a dst of the wrong length.
func peekCalls(t *testing.T, h Harness) {
	c := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Second}, Key: "k"}
	t.Run("context", func(t *testing.T) {
		e := newPeekEnv(t, h)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		dst := make([]algorithms.Decision, 1)
		if err := e.pk.Peek(ctx, dst, []algorithms.Check{c}); err != context.Canceled {
			t.Fatalf("Peek with a cancelled context: %v, want context.Canceled as is", err)
		}
		dctx, dcancel := context.WithDeadline(t.Context(), time.Unix(0, 0))
		defer dcancel()
		if err := e.pk.Peek(dctx, dst, []algorithms.Check{c}); err != context.DeadlineExceeded {
			t.Fatalf("Peek with an expired context: %v, want context.DeadlineExceeded as is", err)
		}
		e.peek(0, c)
	})
	t.Run("closed", func(t *testing.T) {
		e := newPeekEnv(t, h)
		cl, ok := e.store.(interface{ Close() error })
		if !ok {
			t.Skip("the store has no Close method")
		}
		if err := cl.Close(); err != nil {
			t.Fatal(err)
		}
		if err := e.pk.Peek(t.Context(), make([]algorithms.Decision, 1), []algorithms.Check{c}); !errors.Is(err, algorithms.ErrClosed) {
			t.Fatalf("Peek after Close: %v, want algorithms.ErrClosed", err)
		}
	})
	t.Run("dst_length", func(t *testing.T) {
		e := newPeekEnv(t, h)
		if err := e.pk.Peek(t.Context(), make([]algorithms.Decision, 2), []algorithms.Check{c}); err == nil {
			t.Fatal("Peek with 2 decisions for 1 check: no error")
		}
		e.peek(0, c, c)
	})
}
