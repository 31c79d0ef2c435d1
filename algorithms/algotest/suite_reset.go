package algotest

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// resetEnv is an env whose store is an algorithms.Resetter.
type resetEnv struct {
	*env
	rs algorithms.Resetter
}

// newResetEnv returns a resetEnv at Base, or skips t, saying why, when the
// store h makes is not an algorithms.Resetter.
func newResetEnv(t *testing.T, h Harness) *resetEnv {
	t.Helper()
	e := newEnv(t, h)
	rs, ok := e.store.(algorithms.Resetter)
	if !ok {
		t.Skipf("the store (%T) does not implement algorithms.Resetter", e.store)
	}
	return &resetEnv{env: e, rs: rs}
}

// reset resets checks at Base+at on the store and on the Model: their
// errors must agree (both nil or both not). It returns the store's error.
func (e *resetEnv) reset(at time.Duration, checks ...algorithms.Check) error {
	e.t.Helper()
	e.clock.Set(Base.Add(at))
	err := e.rs.Reset(e.ctx, checks...)
	werr := e.model.Reset(checks...)
	if (err == nil) != (werr == nil) {
		e.t.Fatalf("Reset(%s) at +%v: error %v, the model's %v", formatChecks(checks), at, err, werr)
	}
	return err
}

// mustReset is reset, failing the test on an error.
func (e *resetEnv) mustReset(at time.Duration, checks ...algorithms.Check) {
	e.t.Helper()
	if err := e.reset(at, checks...); err != nil {
		e.t.Fatalf("Reset(%s) at +%v: %v", formatChecks(checks), at, err)
	}
}

// exhaust takes unit requests of c at Base+at until one is denied, and
// fails the test unless the capacity was admitted first.
func (e *resetEnv) exhaust(at time.Duration, c algorithms.Check) {
	e.t.Helper()
	c.Cost = 1
	for i := range c.Spec.Capacity() + 1 {
		d := e.take(at, c)[0]
		if d.Allowed != (i < c.Spec.Capacity()) {
			e.t.Fatalf("%s at +%v, unit %d of capacity %d: %+v", formatCheck(c), at, i+1, c.Spec.Capacity(), d)
		}
	}
}

// runReset checks [algorithms.Resetter]: for every kind, a key exhausted
// and then reset is admitted with its whole allowance at the same instant,
// while the same key under another Spec and another key under the same
// Spec keep their state; an unknown key is no error; an invalid Spec
// fails the call and nothing is reset; a cancelled context and a closed
// store fail it too; and a reset key decides, step by step, as the Model
// (whose Reset forgets the key) and as a key never seen on a fresh store.
func runReset(t *testing.T, h Harness) {
	if _, ok := h.New(t, NewClock(Base)).(algorithms.Resetter); !ok {
		t.Skip("the store does not implement algorithms.Resetter")
	}
	specs := kindSpecs(4)
	others := kindSpecs(6) // the same kinds under other Specs
	for i, spec := range specs {
		other := others[i]
		t.Run("exhausted/"+string(spec.Algorithm), func(t *testing.T) {
			e := newResetEnv(t, h)
			k := algorithms.Check{Spec: spec, Key: "k"}
			e.exhaust(0, k)
			// The same key under another Spec, and another key.
			ko := algorithms.Check{Spec: other, Key: "k", Cost: 2}
			e.take(0, ko)
			j := algorithms.Check{Spec: spec, Key: "j", Cost: 1}
			e.take(0, j)
			// The Cost of a Reset's check is ignored, even out of range.
			e.mustReset(0, algorithms.Check{Spec: spec, Key: "k", Cost: spec.Capacity() + 3})
			c := spec.Capacity()
			d := e.take(0, algorithms.Check{Spec: spec, Key: "k", Cost: 2})[0]
			if !d.Allowed || d.Remaining != c-2 || d.Delay != 0 {
				t.Errorf("%s reset at the instant it was exhausted: the next Take of cost 2 decides %+v, want admitted at once with Remaining %d", spec, d, c-2)
			}
			if d := e.take(0, algorithms.Check{Spec: other, Key: "k"})[0]; !d.Allowed || d.Remaining != other.Capacity()-3 {
				t.Errorf("the key under another Spec (%s), which had taken 2: %+v, want Remaining %d: the reset touched it", other, d, other.Capacity()-3)
			}
			if d := e.take(0, j)[0]; !d.Allowed || d.Remaining != c-2 {
				t.Errorf("another key under %s, which had taken 1: %+v, want Remaining %d: the reset touched it", spec, d, c-2)
			}
		})
	}
	t.Run("every_kind_in_one_call", func(t *testing.T) {
		e := newResetEnv(t, h)
		var all []algorithms.Check
		for i, spec := range specs {
			k := algorithms.Check{Spec: spec, Key: "k"}
			e.exhaust(0, k)
			e.exhaust(0, algorithms.Check{Spec: others[i], Key: "k"})
			all = append(all, k)
		}
		e.mustReset(time.Millisecond, all...)
		for i, spec := range specs {
			if d := e.take(time.Millisecond, algorithms.Check{Spec: spec, Key: "k"})[0]; !d.Allowed || d.Remaining != spec.Capacity()-1 {
				t.Errorf("%s after a reset of every kind in one call: %+v, want Remaining %d", spec, d, spec.Capacity()-1)
			}
			// (the buckets refill 3 units a second: none in the millisecond)
			if d := e.take(time.Millisecond, algorithms.Check{Spec: others[i], Key: "k"})[0]; d.Allowed {
				t.Errorf("%s, not reset, admitted after the reset of the other Specs: %+v", others[i], d)
			}
		}
	})
	t.Run("unknown_key", func(t *testing.T) {
		e := newResetEnv(t, h)
		k := algorithms.Check{Spec: specs[0], Key: "k"}
		e.take(0, k)
		// A key never seen under a Spec held, one under a Spec never seen,
		// the empty key, and one twice.
		unseen := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 77, Window: time.Hour}
		e.mustReset(0,
			algorithms.Check{Spec: specs[0], Key: "never"},
			algorithms.Check{Spec: unseen, Key: "k"},
			algorithms.Check{Spec: specs[0], Key: ""},
			algorithms.Check{Spec: specs[0], Key: "never"})
		e.mustReset(0) // no check
		if d := e.take(0, k)[0]; d.Remaining != specs[0].Capacity()-2 {
			t.Errorf("%s after resets of other keys: Remaining %d, want %d", specs[0], d.Remaining, specs[0].Capacity()-2)
		}
		// Twice in a row, and a key reset twice in one call.
		e.mustReset(0, k, k)
		e.mustReset(0, k)
		if d := e.take(0, k)[0]; d.Remaining != specs[0].Capacity()-1 {
			t.Errorf("%s reset twice: Remaining %d, want %d", specs[0], d.Remaining, specs[0].Capacity()-1)
		}
	})
	t.Run("unknown_before_held", func(t *testing.T) {
		// A call whose first checks name a Spec the store never saw and
		// a key never seen under a Spec it holds, then held keys of
		// every kind, exhausted: the held keys are reset all the same.
		e := newResetEnv(t, h)
		unseen := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 77, Window: time.Hour}
		call := []algorithms.Check{{Spec: unseen, Key: "k"}, {Spec: specs[0], Key: "never"}}
		for _, spec := range specs {
			k := algorithms.Check{Spec: spec, Key: "k"}
			e.exhaust(0, k)
			call = append(call, k)
		}
		e.mustReset(time.Millisecond, call...)
		for _, spec := range specs {
			if d := e.take(time.Millisecond, algorithms.Check{Spec: spec, Key: "k"})[0]; !d.Allowed || d.Remaining != spec.Capacity()-1 {
				t.Errorf("%s after a reset whose first checks named an unknown Spec and an unknown key: %+v, want Remaining %d", spec, d, spec.Capacity()-1)
			}
		}
	})
	t.Run("invalid_spec", func(t *testing.T) {
		bads := []struct {
			spec  algorithms.Spec
			field string
		}{
			{algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 0, Window: time.Second}, "Limit"},
			{algorithms.Spec{Algorithm: "gcra", Limit: 5, Window: time.Second}, "Algorithm"},
			{algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: 5 * time.Second, Buckets: 7}, "Buckets"},
			{algorithms.Spec{}, "Algorithm"},
		}
		for _, bad := range bads {
			e := newResetEnv(t, h)
			for _, spec := range specs {
				e.exhaust(0, algorithms.Check{Spec: spec, Key: "k"})
			}
			b := algorithms.Check{Spec: bad.spec, Key: "k"}
			for _, spec := range specs {
				k := algorithms.Check{Spec: spec, Key: "k"}
				for _, call := range [][]algorithms.Check{{k, b}, {b, k}, {k, k, b}} {
					err := e.reset(0, call...)
					var se *algorithms.SpecError
					switch {
					case err == nil:
						t.Fatalf("Reset(%s): no error", formatChecks(call))
					case !errors.Is(err, algorithms.ErrInvalidSpec) || !errors.As(err, &se):
						t.Fatalf("Reset(%s): error %v, want a *algorithms.SpecError", formatChecks(call), err)
					case se.Field != bad.field:
						t.Fatalf("Reset(%s): error names the field %q, want %q", formatChecks(call), se.Field, bad.field)
					}
				}
				if d := e.take(0, k)[0]; d.Allowed {
					t.Errorf("%s after a Reset that failed on an invalid Spec: %+v, want still denied: a check was reset", spec, d)
				}
			}
		}
	})
	t.Run("context", func(t *testing.T) {
		cancelled, cancel := context.WithCancel(t.Context())
		cancel()
		expired, cancel2 := context.WithDeadline(t.Context(), time.Unix(0, 0))
		defer cancel2()
		for _, c := range []struct {
			ctx  context.Context
			want error
		}{{cancelled, context.Canceled}, {expired, context.DeadlineExceeded}} {
			e := newResetEnv(t, h)
			k := algorithms.Check{Spec: specs[0], Key: "k"}
			e.exhaust(0, k)
			if err := e.rs.Reset(c.ctx, k); !errors.Is(err, c.want) {
				t.Errorf("Reset with a done context: %v, want an error matching %v", err, c.want)
			}
			if d := e.take(0, k)[0]; d.Allowed {
				t.Errorf("after a Reset with a done context the key is admitted: %+v", d)
			}
		}
	})
	t.Run("closed", func(t *testing.T) {
		e := newResetEnv(t, h)
		c, ok := e.store.(interface{ Close() error })
		if !ok {
			t.Skipf("the store (%T) has no Close method", e.store)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := e.rs.Reset(e.ctx, algorithms.Check{Spec: specs[0], Key: "k"}); !errors.Is(err, algorithms.ErrClosed) {
			t.Errorf("Reset after Close: %v, want an error matching algorithms.ErrClosed", err)
		}
	})
	for _, spec := range specs {
		t.Run("model_traces/"+string(spec.Algorithm), func(t *testing.T) {
			for seed := range uint64(4) {
				resetTrace(t, h, spec, seed)
			}
		})
	}
}

// resetTrace takes and resets two keys of spec at random instants and
// costs, comparing every decision with the Model's (whose Reset forgets the
// key). The Takes of key "k" after its last reset are then made again on a
// fresh store, at the same instants, on a key it never saw: their
// decisions must be the same, so that the reset key is a new key in the
// store's own terms too.
func resetTrace(t *testing.T, h Harness, spec algorithms.Spec, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 0x5e5e7))
	e := newResetEnv(t, h)
	type take struct {
		at   time.Duration
		cost int64
		d    algorithms.Decision
	}
	var after []take // the Takes of "k" since its last reset
	var at time.Duration
	var last algorithms.Decision
	resets := 0
	for i := range 150 {
		switch r.IntN(6) {
		case 0: // the same instant
		case 1:
			at += time.Nanosecond
		case 2:
			at += max(last.RetryAfter, time.Nanosecond)
		case 3:
			at += last.NextAfter
		default:
			at += time.Duration(r.Int64N(int64(spec.Window) / 3))
		}
		if r.IntN(8) == 0 {
			keys := [][]string{{"k"}, {"j"}, {"j", "k"}}[r.IntN(3)]
			var cs []algorithms.Check
			for _, k := range keys {
				cs = append(cs, algorithms.Check{Spec: spec, Key: k})
				if k == "k" {
					after = after[:0]
					resets++
				}
			}
			e.mustReset(at, cs...)
		} else {
			key := []string{"k", "k", "j"}[r.IntN(3)]
			cost := 1 + r.Int64N(spec.Capacity())
			last = e.take(at, algorithms.Check{Spec: spec, Key: key, Cost: cost})[0]
			if key == "k" {
				after = append(after, take{at, cost, last})
			}
		}
		if t.Failed() {
			t.Fatalf("seed %d: the store and the model differ at step %d", seed, i)
		}
	}
	if resets == 0 {
		t.Fatalf("seed %d: the trace never reset the key", seed)
	}
	clock := NewClock(Base)
	fresh := h.New(t, clock)
	for _, tk := range after {
		c := algorithms.Check{Spec: spec, Key: "k", Cost: tk.cost}
		clock.Set(Base.Add(tk.at))
		ds, err := fresh.Take(t.Context(), c)
		if err != nil {
			t.Fatal(err)
		}
		if ds[0] != tk.d {
			t.Fatalf("seed %d: Take(%s) at +%v after the key's last reset decided %+v, and on a key never seen %+v", seed, formatCheck(c), tk.at, tk.d, ds[0])
		}
	}
}
