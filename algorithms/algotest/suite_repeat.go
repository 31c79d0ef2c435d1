package algotest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// repeatCase is a call with several checks on one key under one Spec: over
// is true when they ask together for more than the key can ever admit at
// once, and then cost and combined are what the *CostError reports (the
// cost, as given, of the check at which the total passes the bound, and
// the total up to and including it).
type repeatCase struct {
	name           string
	checks         []algorithms.Check
	over           bool
	cost, combined int64
}

// repeatCases returns the calls runRepeatCost makes on spec, a spec of
// kindSpecs(4).
func repeatCases(spec algorithms.Spec) []repeatCase {
	c := spec.Capacity()
	k := func(n int64) algorithms.Check { return algorithms.Check{Spec: spec, Key: "k", Cost: n} }
	other := func(key string, n int64) algorithms.Check { return algorithms.Check{Spec: spec, Key: key, Cost: n} }
	variant := spec
	variant.Limit++ // the same key under another Spec: state of its own
	// Nine checks, past the memory store's batch of eight: four other keys,
	// then the key five times at cost 1.
	nine := []algorithms.Check{other("a", 1), other("b", 1), other("c", 1), other("d", 1), k(1), k(1), k(1), k(0), k(1)}
	cases := []repeatCase{
		{name: "nine_checks", checks: nine, over: true, cost: 1, combined: 5},
		{name: "other_keys_and_specs", checks: []algorithms.Check{k(c), other("a", c), {Spec: variant, Key: "k", Cost: variant.Capacity()}}},
	}
	if spec.Algorithm == algorithms.LeakyQueue {
		// A queue admits a request while what is queued ahead of it waits at
		// most MaxDelay: the checks before the last may hold c−1 places
		// together, and the last any cost up to c.
		return append(cases,
			repeatCase{name: "capacity_then_one", checks: []algorithms.Check{k(c), k(1)}, over: true, cost: 1, combined: c + 1},
			repeatCase{name: "two_two_one", checks: []algorithms.Check{k(2), k(2), k(1)}, over: true, cost: 1, combined: 5},
			repeatCase{name: "ones", checks: []algorithms.Check{k(1), k(0), k(1), other("a", 1), k(1), k(1)}, over: true, cost: 1, combined: 5},
			repeatCase{name: "capacity_less_one_then_capacity", checks: []algorithms.Check{k(c - 1), k(c)}},
			repeatCase{name: "ones_then_capacity", checks: []algorithms.Check{k(1), k(0), k(1), k(c)}},
		)
	}
	return append(cases,
		repeatCase{name: "two_and_three", checks: []algorithms.Check{k(2), k(3)}, over: true, cost: 3, combined: 5},
		repeatCase{name: "capacity_then_one", checks: []algorithms.Check{k(c), other("a", 1), k(0)}, over: true, cost: 0, combined: c + 1},
		repeatCase{name: "ones", checks: []algorithms.Check{k(1), k(0), k(1), k(1), k(1)}, over: true, cost: 1, combined: 5},
		repeatCase{name: "capacity_less_one_then_one", checks: []algorithms.Check{k(c - 1), k(1)}},
		repeatCase{name: "to_capacity", checks: []algorithms.Check{k(1), other("a", c), k(0), k(2)}},
	)
}

// runRepeatCost: a call whose checks on one key under one Spec ask
// together for more than that key can ever admit at once (more than its
// capacity; for leaky_queue, those before the last more than its capacity
// less one) is a *CostError, as a single check above the capacity is, not
// a denial that no wait ends: the Model's error, before anything is
// decided, even on a key that would deny, and consuming nothing. Peek,
// GiveBack and Refund (its leaky_queue checks) refuse the same checks with
// the same error. Checks that reach the bound exactly are admitted on a
// fresh key.
func runRepeatCost(t *testing.T, h Harness) {
	// The issue's own case: 3 and 3 under a limit of 5.
	t.Run("fixed_window_three_and_three", func(t *testing.T) {
		spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Second}
		e := newEnv(t, h)
		k := algorithms.Check{Spec: spec, Key: "k", Cost: 3}
		e.repeatError(0, []algorithms.Check{k, k}, 3, 6)
		if d := e.take(0, algorithms.Check{Spec: spec, Key: "k", Cost: 5})[0]; !d.Allowed {
			t.Fatalf("after Take(cost 3, cost 3) failed, a Take of cost 5 reports %+v: the failed call consumed", d)
		}
	})
	for _, spec := range kindSpecs(4) {
		t.Run(string(spec.Algorithm), func(t *testing.T) {
			for _, rc := range repeatCases(spec) {
				t.Run(rc.name, func(t *testing.T) {
					e := newEnv(t, h)
					if !rc.over {
						if ds := e.take(0, rc.checks...); !allAllowed(ds) {
							t.Fatalf("Take(%s) on fresh keys = %+v; want every check admitted", formatChecks(rc.checks), ds)
						}
						return
					}
					e.repeatError(0, rc.checks, rc.cost, rc.combined)
					// Nothing was consumed: every key has its whole capacity.
					c := spec.Capacity()
					full := []algorithms.Check{{Spec: spec, Key: "k", Cost: c}}
					for _, key := range []string{"a", "b", "c", "d"} {
						full = append(full, algorithms.Check{Spec: spec, Key: key, Cost: c})
					}
					if ds := e.take(0, full...); !allAllowed(ds) {
						t.Fatalf("after Take(%s) failed, Take(%s) = %+v; want every check admitted: the failed call consumed", formatChecks(rc.checks), formatChecks(full), ds)
					}
					// On a key that denies, still the error, not a denial.
					e.repeatError(time.Millisecond, rc.checks, rc.cost, rc.combined)
					e.repeatOthers(time.Millisecond, rc)
					// The failed calls gave nothing back either.
					if ds := e.take(time.Millisecond, algorithms.Check{Spec: spec, Key: "k"}); ds[0].Allowed {
						t.Fatalf("the key, exhausted before the failed calls, admits a request after them: %+v", ds[0])
					}
				})
			}
		})
	}
}

// repeatError requires that a Take of checks at Base+at fail with the
// *CostError of a repeated key on the store and on the Model, with the
// same message, reporting cost and combined.
func (e *env) repeatError(at time.Duration, checks []algorithms.Check, cost, combined int64) {
	e.t.Helper()
	now := Base.Add(at)
	e.clock.Set(now)
	ds, err := e.store.Take(e.ctx, checks...)
	if msg := repeatErrorSays(err, checks, cost, combined); msg != "" {
		e.t.Fatalf("Take(%s) at +%v = %+v, %v: %s", formatChecks(checks), at, ds, err, msg)
	}
	_, merr := e.model.TakeAt(now, checks...)
	if msg := repeatErrorSays(merr, checks, cost, combined); msg != "" {
		e.t.Fatalf("model: Take(%s) at +%v: %v: %s", formatChecks(checks), at, merr, msg)
	}
	if err.Error() != merr.Error() {
		e.t.Fatalf("Take(%s) at +%v: error %q, the Model's %q", formatChecks(checks), at, err, merr)
	}
}

// repeatOthers requires that the store's Peek, GiveBack and Refund, those
// it has, refuse rc's checks at Base+at with Take's error (Refund only
// when they are leaky_queue checks: it looks at no other kind).
func (e *env) repeatOthers(at time.Duration, rc repeatCase) {
	e.t.Helper()
	e.clock.Set(Base.Add(at))
	_, want := e.store.Take(e.ctx, rc.checks...)
	if want == nil {
		e.t.Fatalf("Take(%s): no error", formatChecks(rc.checks))
	}
	same := func(call string, err error) {
		e.t.Helper()
		if err == nil || err.Error() != want.Error() || !errors.Is(err, algorithms.ErrInvalidCost) {
			e.t.Fatalf("%s(%s) at +%v: %v; want Take's error, %v", call, formatChecks(rc.checks), at, err, want)
		}
	}
	if pk, ok := e.store.(algorithms.Peeker); ok {
		same("Peek", pk.Peek(e.ctx, make([]algorithms.Decision, len(rc.checks)), rc.checks))
	}
	// As if a Take of the checks had admitted them all.
	ds := make([]algorithms.Decision, len(rc.checks))
	for i, c := range rc.checks {
		ds[i] = algorithms.Decision{Allowed: true, Limit: c.Spec.Capacity()}
	}
	if gb, ok := e.store.(algorithms.GiveBacker); ok {
		same("GiveBack", gb.GiveBack(e.ctx, make([]algorithms.Refunded, len(rc.checks)), rc.checks, ds, 0))
	}
	if rf, ok := e.store.(algorithms.Refunder); ok && rc.checks[0].Spec.Algorithm == algorithms.LeakyQueue {
		same("Refund", rf.Refund(e.ctx, make([]algorithms.Refunded, len(rc.checks)), rc.checks, ds, 0))
	}
}

// repeatErrorSays returns what is wrong with err as the error of a call of
// checks whose repeated key passes its bound at a check of cost cost (as
// given), with combined the total so far, or "" when nothing is.
func repeatErrorSays(err error, checks []algorithms.Check, cost, combined int64) string {
	var ce *algorithms.CostError
	switch {
	case err == nil:
		return "want a *algorithms.CostError"
	case !errors.Is(err, algorithms.ErrInvalidCost):
		return "does not match algorithms.ErrInvalidCost"
	case errors.Is(err, algorithms.ErrInvalidSpec):
		return "matches algorithms.ErrInvalidSpec; the specs are valid"
	case !errors.As(err, &ce):
		return "is not a *algorithms.CostError"
	case ce.Spec != checks[len(checks)-1].Spec:
		return fmt.Sprintf("names the Spec %s, want %s", ce.Spec, checks[len(checks)-1].Spec)
	case ce.Cost != cost:
		return fmt.Sprintf("reports the cost %d, want %d", ce.Cost, cost)
	case ce.Combined != combined:
		return fmt.Sprintf("reports the combined cost %d, want %d", ce.Combined, combined)
	case !strings.Contains(err.Error(), fmt.Sprintf("cost %d together", combined)) ||
		!strings.Contains(err.Error(), ce.Spec.String()) ||
		!strings.Contains(err.Error(), fmt.Sprintf("capacity %d", ce.Spec.Capacity())):
		return "does not name the Spec, the combined cost and the capacity"
	}
	return ""
}

// repeatWaitSpecs returns the specs runRepeatWait tries: each kind at two
// capacities, and at windows and rates that do not divide evenly.
func repeatWaitSpecs() []algorithms.Spec {
	specs := append(kindSpecs(4), kindSpecs(10)...)
	return append(specs,
		algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 7, Window: 7 * time.Second},
		algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 7, Window: 7 * time.Second},
		algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 7, Window: 7 * time.Second},
		algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 7, Window: 9 * time.Second, Buckets: 3},
		algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 3, Window: 7 * time.Second, Burst: 8},
		algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 3, Window: 7 * time.Second, Burst: 8},
		algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 3, Window: 7 * time.Second, MaxDelay: 17 * time.Second},
	)
}

// runRepeatWait: a denied call whose checks name one key more than once
// (within what the key admits at once) is admitted, the same call, once
// the longest RetryAfter of its denied checks has passed if nothing else
// arrives, and is still denied a nanosecond before: RetryAfter is the
// shortest wait for the whole call, the checks of a key counted together.
// First the case, then random histories of single checks on each
// spec followed by random calls with a repeated key (and another key, now
// and then), a quarter of them up to a window before the key's latest
// instant (a clock gone back: decided at that instant, the waits
// lengthened by the difference); every decision is also the Model's.
func runRepeatWait(t *testing.T, h Harness) {
	// sliding_window, 10 a minute, 5 admitted at 10 s, then 5 and 5 at 50
	// s: the second 5 waits until the first 5 have left the window of the
	// retry, at 120 s, not only until they weigh as the previous window's
	// (at 90 s a retry counts 2.5 of them and all 10 of its own).
	t.Run("sliding_window_five_then_five_and_five", func(t *testing.T) {
		spec := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 10, Window: time.Minute}
		e := newEnv(t, h)
		five := algorithms.Check{Spec: spec, Key: "k", Cost: 5}
		e.take(10*time.Second, five)
		ds := e.take(50*time.Second, five, five)
		if !ds[0].Allowed || ds[1].Allowed || ds[1].RetryAfter != 70*time.Second {
			t.Fatalf("Take(5, 5) at +50s after 5 at +10s = %+v; want the second denied with RetryAfter 70s", ds)
		}
		e.repeatWaitHolds(50*time.Second, []algorithms.Check{five, five}, ds, nil)
	})
	for si, spec := range repeatWaitSpecs() {
		t.Run(fmt.Sprintf("%s/%d", spec.Algorithm, si), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(si), 0x4e9ea7))
			e := newEnv(t, h)
			c, w := spec.Capacity(), int64(spec.Window)
			var at time.Duration
			var denied int
			for trial := range 60 {
				k := fmt.Sprintf("k%d", trial)
				check := func(n int64) algorithms.Check { return algorithms.Check{Spec: spec, Key: k, Cost: n} }
				var history []string
				for range r.IntN(4) {
					at += time.Duration(r.Int64N(w))
					ch := check(1 + r.Int64N(c))
					e.take(at, ch)
					history = append(history, fmt.Sprintf("+%v Take(%s)", at, formatCheck(ch)))
				}
				at += time.Duration(r.Int64N(w / 2))
				checks := []algorithms.Check{check(1 + r.Int64N(c))}
				for range 1 + r.IntN(3) {
					if r.IntN(5) == 0 {
						checks = append(checks, algorithms.Check{Spec: spec, Key: k + "j", Cost: 1 + r.Int64N(c)})
					}
					checks = append(checks, check(1+r.Int64N(c)))
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
				t.Fatalf("no call was denied: the test tries nothing")
			}
		})
	}
}

// repeatWaitHolds requires of ds, the decisions of a denied Take of checks
// at Base+at after history, that the same Take be denied at the longest
// RetryAfter of its denied checks less a nanosecond, and admitted at it
// (consuming then), and returns that instant.
func (e *env) repeatWaitHolds(at time.Duration, checks []algorithms.Check, ds []algorithms.Decision, history []string) time.Duration {
	e.t.Helper()
	var wait time.Duration
	for _, d := range ds {
		if !d.Allowed {
			wait = max(wait, d.RetryAfter)
		}
	}
	say := func(when time.Duration, got []algorithms.Decision, want string) {
		e.t.Helper()
		e.t.Fatalf("after %v, Take(%s) at +%v = %+v, longest RetryAfter %v; at +%v the same Take = %+v, want %s",
			history, formatChecks(checks), at, ds, wait, when, got, want)
	}
	if wait <= 0 {
		say(at, ds, "a positive RetryAfter on a denied check")
	}
	if got := e.take(at+wait-1, checks...); allAllowed(got) {
		say(at+wait-1, got, "denied: RetryAfter is not the shortest wait")
	}
	if got := e.take(at+wait, checks...); !allAllowed(got) {
		say(at+wait, got, "every check admitted after the longest RetryAfter")
	}
	return at + wait
}
