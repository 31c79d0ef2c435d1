package algotest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// A Harness tells [Run] how to make the stores it tests.
type Harness struct {
	// New returns a fresh, empty store that reads clock once per call. It
	// registers any cleanup with t.Cleanup. Required.
	New func(t *testing.T, clock algorithms.Clock) algorithms.Store
	// NewBounded, if set, returns a fresh store holding at most maxKeys
	// keys. Such a store must never refuse a new key, and must evict a key
	// that made one request before one that is being limited. When nil, the
	// max-keys tests skip, saying so.
	NewBounded func(t *testing.T, clock algorithms.Clock, maxKeys int) algorithms.Store
}

// TracesEnv names the environment variable that sets how many random traces
// ModelTraces replays (default 14, of 1200 steps each; ClockSkew replays half
// as many, of 800 steps); CI can raise it for a longer soak.
const TracesEnv = "ALGOTEST_TRACES"

const (
	defaultTraces = 14
	traceSteps    = 1200
	skewSteps     = 800
)

// Run runs the conformance suite against the stores h makes, each sub-suite
// as a subtest with a stable name:
//
//   - SeedExamples/<example>: the worked examples of seeds 000 and 004;
//   - Boundaries/<case>: decisions at boundaries random traces rarely
//     reach (a bucket or queue a fraction of a nanosecond from full or free),
//     with their exact values, also compared with the Model;
//   - ModelTraces/seed=<n>: random traces (every kind, several specs and
//     keys, multi-check calls) compared with the [Model], every field of
//     every decision; a store with a Sweep method sweeps every few calls,
//     so that dropping a key that is not idle shows;
//   - ClockSkew/seed=<n>: the same with instants that go back (app hosts
//     whose clocks disagree), compared with the Model;
//     ClockSkew/denied_ahead/<kind>: a Take denied a window ahead of a
//     key's newest instant leaves a later Take at an earlier instant
//     deciding as without it (a log it pruned would show);
//   - Concurrency/<kind>: 64 goroutines at one frozen instant admit exactly
//     the capacity, never more; Concurrency/mixed_costs: calls of cost 1 and
//     2 take at most the capacity and the key accounts for exactly what they
//     took; Concurrency/opposite_orders: two-key calls in both orders neither
//     deadlock nor lose an update; Concurrency/multi_check: a two-check call
//     consumes from both keys or from neither;
//   - ConcurrentPhases/<kind>: 64 goroutines make identical calls at one
//     frozen instant, then at the next (a nanosecond, a RetryAfter, a window
//     boundary later, or back), with one check, one key twice or two specs
//     stacked: the multiset of their decisions is the Model's for the same
//     calls made one after the other;
//   - AllOrNothing/<kind>: a denied call consumes nothing; two checks on one
//     key see each other;
//   - Expiry/<kind>: a key idle past its ResetAfter decides like a fresh one;
//     Expiry/sweep for stores with Sweep and Len methods;
//   - MaxKeys/<kind>: a flood of keys never makes the store refuse a key and
//     does not evict a key being limited (needs h.NewBounded);
//   - InvalidChecks/<case>: bad specs and costs are errors that say which
//     field, and consume nothing; InvalidChecks/cost_above_capacity_held/<kind>:
//     also on keys the store already holds, alone and beside another check;
//   - RepeatCost/<kind>/<case>: checks of one call on one key under one
//     Spec that ask together for more than the key can ever admit at once
//     are the Model's *algorithms.CostError, consume nothing, and are
//     Peek's, GiveBack's and Refund's error too; checks that reach the
//     bound exactly are admitted;
//   - RepeatWait/<case>: after random single checks (and in the issue's
//     sliding_window case, 5 of 10, then 5 and 5), a denied call
//     that names one key more than once is admitted, the same call, once
//     the longest RetryAfter of its denied checks has passed if nothing
//     else arrives, and is still denied a nanosecond before (also when the
//     call's instant is before the key's latest);
//   - RepeatTraces/seed=<n>: random calls of up to 11 checks naming
//     keys several times, mixed with every kind (limits small, or near
//     MaxLimit), costs to the bound and past it, instants going back:
//     Peek, Take, GiveBack and Refund (for a store with them) are the
//     Model's, errors included, and every decision keeps Decision's
//     documented relations (Remaining within [0, Limit], RetryAfter
//     positive exactly when denied, NextAfter 0 exactly at Limit, no later
//     than ResetAfter, and no later than RetryAfter when denied);
//   - Context/<case>: a cancelled or expired context is returned as the
//     error, and consumes nothing;
//   - TakeInto: for an algorithms.IntoStore, TakeInto decides as Take does;
//   - Closed: for a store with a Close method, Close is idempotent and
//     later calls fail with algorithms.ErrClosed;
//   - Refund/<case>: for an algorithms.Refunder, a refunded last queue
//     place goes to the next arrival, exactly; a place with requests queued
//     behind it, the other kinds' units and a denied Take's checks are kept;
//     what each Refund reports of each check (its key after the refund,
//     whether its place came back) is the Model's ([Model.RefundAt]), and
//     Refund/model_traces compares random Takes and Refunds with it;
//   - GiveBack/<case>: for an algorithms.GiveBacker, each kind gives back
//     a Take's units while they still count and not after, with other
//     requests between, costs above 1, a denied Take, stacked checks;
//     a sliding_log give-back a window ahead forgets no event that a
//     Take at an earlier instant counts (log_ahead); the logged instant
//     nearest the reckoning gives back no more units than it holds
//     (log_nearest_holds_less); a reckoning halfway between the Take's
//     window (bucket) and the next, or 1 ns either side, picks the
//     nearer, a tie the later (reckoned_midway);
//     every report is the Model's ([Model.GiveBackAt]), and
//     GiveBack/model_traces compares random Takes and give-backs with it;
//   - Peek/<case>: for an algorithms.Peeker, random traces whose every
//     step is peeked before its Take: each Peek is the Model's
//     ([Model.PeekAt]) and agrees with the Take, and the Takes are the
//     Model's, which saw no peek; a Peek ahead of a key, or of a key the
//     store does not hold, changes and makes nothing; two checks of one
//     key are each decided alone; an invalid check is Take's error;
//   - Reset/<case>: for an algorithms.Resetter, a key exhausted and reset
//     is admitted with its whole allowance at the same instant, under
//     every kind, while the key under another Spec and other keys keep
//     their state; an unknown key (or Spec) is no error, and the call's
//     checks after it are reset all the same; an invalid Spec fails the
//     call and resets nothing; a done context or a closed store fails it;
//     Reset/model_traces compares random Takes and Resets with the Model
//     ([Model.Reset]), and a reset key's later Takes with a key never seen;
//   - Judged/<case>: checks of the window kinds judged at a limit below
//     their Spec's ([algorithms.Check.Limit]) on the state kept for (Spec,
//     Key): the case (40 of 100 used, judged at 50: exactly 10
//     more) and a key above the judged limit, with waits worked out by
//     hand; judged at Spec.Limit as unjudged; the units counted while
//     judged lower seen at Spec.Limit again; one key named several times
//     at several limits; stacked with another Spec; all or nothing; Peek, GiveBack, Reset,
//     concurrency and a bounded store with judged checks; RetryAfter of
//     denied calls; invalid limits and costs (ValidateChecks' errors);
//     for fixed_window, sliding_window and sliding_buckets, limits raised
//     above the Spec's (100 of 100 used, judged at 110: exactly 10 more;
//     at Spec.Limit again, denied until the window frees room; all or
//     nothing; concurrency; a bounded store; a give-back, after a Reset
//     too, never below 0); random
//     traces mixing judged (below and above the Spec's limit, up to
//     algorithms.MaxLimit) and unjudged checks on the same keys compared
//     with the Model.
//
// Every decision the suite makes is also compared with the Model, but for
// those whose exact values are checked otherwise: the seed examples (against
// the seeds' own figures, which the Model meets in its own tests), the
// concurrent calls of Concurrency (whose order is unknown: their count and
// Remaining are checked), the flood keys of MaxKeys (each must be admitted)
// and the keys of Expiry/sweep (only what Sweep keeps is in question).
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.New == nil {
		t.Fatal("algotest: Harness.New is nil")
	}
	t.Run("SeedExamples", func(t *testing.T) { runSeedExamples(t, h) })
	t.Run("Boundaries", func(t *testing.T) { runBoundaries(t, h) })
	t.Run("ModelTraces", func(t *testing.T) { runModelTraces(t, h) })
	t.Run("ClockSkew", func(t *testing.T) { runClockSkew(t, h) })
	t.Run("Concurrency", func(t *testing.T) { runConcurrency(t, h) })
	t.Run("ConcurrentPhases", func(t *testing.T) { runConcurrentPhases(t, h) })
	t.Run("AllOrNothing", func(t *testing.T) { runAllOrNothing(t, h) })
	t.Run("Expiry", func(t *testing.T) { runExpiry(t, h) })
	t.Run("MaxKeys", func(t *testing.T) { runMaxKeys(t, h) })
	t.Run("InvalidChecks", func(t *testing.T) { runInvalidChecks(t, h) })
	t.Run("RepeatCost", func(t *testing.T) { runRepeatCost(t, h) })
	t.Run("RepeatWait", func(t *testing.T) { runRepeatWait(t, h) })
	t.Run("RepeatTraces", func(t *testing.T) { runRepeatTraces(t, h) })
	t.Run("Context", func(t *testing.T) { runContext(t, h) })
	t.Run("TakeInto", func(t *testing.T) { runTakeInto(t, h) })
	t.Run("Closed", func(t *testing.T) { runClosed(t, h) })
	t.Run("Refund", func(t *testing.T) { runRefund(t, h) })
	t.Run("GiveBack", func(t *testing.T) { runGiveBack(t, h) })
	t.Run("Peek", func(t *testing.T) { runPeek(t, h) })
	t.Run("Reset", func(t *testing.T) { runReset(t, h) })
	t.Run("Judged", func(t *testing.T) { runJudged(t, h) })
}

// env pairs a store under test with the Model, at instants relative to Base.
type env struct {
	t     *testing.T
	ctx   context.Context
	clock *Clock
	store algorithms.Store
	model *Model
}

func newEnv(t *testing.T, h Harness) *env {
	clock := NewClock(Base)
	return &env{t: t, ctx: t.Context(), clock: clock, store: h.New(t, clock), model: NewModel()}
}

// take decides checks at Base+at on the store and on the model, fails the
// test on an error or when they disagree, and returns the store's decisions.
func (e *env) take(at time.Duration, checks ...algorithms.Check) []algorithms.Decision {
	e.t.Helper()
	now := Base.Add(at)
	e.clock.Set(now)
	got, err := e.store.Take(e.ctx, checks...)
	if err != nil {
		e.t.Fatalf("Take(%s) at +%v: %v", formatChecks(checks), at, err)
	}
	want, err := e.model.TakeAt(now, checks...)
	if err != nil {
		e.t.Fatalf("model: Take(%s) at +%v: %v", formatChecks(checks), at, err)
	}
	if len(got) != len(want) {
		e.t.Fatalf("Take(%s) at +%v: %d decisions, want %d", formatChecks(checks), at, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			e.t.Errorf("Take(%s) at +%v, check %d: decisions differ from the model:\n\tgot  %+v\n\twant %+v", formatChecks(checks), at, i, got[i], want[i])
		}
	}
	return got
}

// formatChecks formats checks as a list, for messages that say "Take(%s)".
func formatChecks(checks []algorithms.Check) string {
	s := Step{Checks: checks}.format() // "+0s Take(...)"
	return s[len("+0s Take(") : len(s)-1]
}

func runSeedExamples(t *testing.T, h Harness) {
	for _, ex := range seedExamples {
		t.Run(ex.name, func(t *testing.T) {
			clock := NewClock(Base)
			store := h.New(t, clock)
			ex.run(t, func(at time.Duration, c algorithms.Check) algorithms.Decision {
				t.Helper()
				clock.Set(Base.Add(at))
				ds, err := store.Take(t.Context(), c)
				if err != nil {
					t.Fatalf("Take(%s) at +%v: %v", formatCheck(c), at, err)
				}
				if len(ds) != 1 {
					t.Fatalf("Take(%s) at +%v: %d decisions, want 1", formatCheck(c), at, len(ds))
				}
				return ds[0]
			})
		})
	}
}

// traces returns the number of random traces to replay: defaultTraces, or
// the number TracesEnv says.
func traces(t *testing.T) int {
	v := os.Getenv(TracesEnv)
	if v == "" {
		return defaultTraces
	}
	k, err := strconv.Atoi(v)
	if err != nil || k < 1 {
		t.Fatalf("%s=%q: want a positive number of traces", TracesEnv, v)
	}
	return k
}

func runModelTraces(t *testing.T, h Harness) {
	for seed := range uint64(traces(t)) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			compareModel(t, h, RandomTrace(seed, traceSteps), "", true)
		})
	}
}

func runClockSkew(t *testing.T, h Harness) {
	for seed := range uint64(max(1, traces(t)/2)) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			compareModel(t, h, RandomSkewTrace(seed, skewSteps), "with clocks that go back, ", false)
		})
	}
	for _, spec := range kindSpecs(4) {
		t.Run("denied_ahead/"+string(spec.Algorithm), func(t *testing.T) { deniedAhead(t, h, spec) })
	}
}

// deniedAhead: a key takes half its capacity at +1 s and the rest half a
// window later; a Take of the whole capacity a window after the first is
// denied (the second half is still in the window), and must change
// nothing: back at the second half's instant, by a clock that read the
// time before it, the key is as full as the Model says (the first half
// still counts there).
func deniedAhead(t *testing.T, h Harness, spec algorithms.Spec) {
	e := newEnv(t, h)
	c := capacity(spec)
	half := algorithms.Check{Spec: spec, Key: "k", Cost: c / 2}
	first, second := time.Second, time.Second+spec.Window/2
	e.take(first, half)
	e.take(second, half)
	e.take(first+spec.Window+time.Millisecond, algorithms.Check{Spec: spec, Key: "k", Cost: c})
	one := algorithms.Check{Spec: spec, Key: "k"}
	e.take(second, one)
	e.take(second+time.Millisecond, one)
}

// shrinkBudget bounds the replays spent shrinking a failing trace.
const shrinkBudget = 300

// compareModel replays tr on a fresh store and on the Model; when they
// disagree it reports the difference, then shrinks the trace (each candidate
// replayed on a fresh store) and reports the shortest failing trace found.
// With sweep, a store that has a Sweep method sweeps before every
// sweepEvery-th call: dropping a key that is not idle shows as a mismatch.
func compareModel(t *testing.T, h Harness, tr Trace, context string, sweep bool) {
	t.Helper()
	newStore := func(clock *Clock) algorithms.Store {
		s := h.New(t, clock)
		if sw, ok := s.(interface{ Sweep() int }); ok && sweep {
			return &sweeping{Store: s, sweep: sw.Sweep}
		}
		return s
	}
	clock := NewClock(tr.Start)
	diff, err := CompareModel(t.Context(), newStore(clock), clock, tr)
	if err != nil {
		t.Fatal(err)
	}
	if diff == "" {
		return
	}
	t.Errorf("%sthe store disagrees with the model:\n%s", context, diff)
	last := diff
	short := Shrink(tr, func(c Trace) bool {
		clock := NewClock(c.Start)
		d, err := CompareModel(t.Context(), newStore(clock), clock, c)
		if err == nil && d != "" {
			last = d
			return true
		}
		return false
	}, shrinkBudget)
	if len(short.Steps) < len(tr.Steps) {
		t.Errorf("shrunk to %d of its %d steps:\n%s", len(short.Steps), len(tr.Steps), last)
	}
}

// sweepEvery is how often a sweeping store sweeps, in calls.
const sweepEvery = 7

// sweeping is a Store that calls sweep before every sweepEvery-th Take.
type sweeping struct {
	algorithms.Store
	sweep func() int
	calls int
}

func (s *sweeping) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	if s.calls++; s.calls%sweepEvery == 0 {
		s.sweep()
	}
	return s.Store.Take(ctx, checks...)
}

// kindSpecs returns one spec of each kind with capacity c (c >= 2), at time
// scales where nothing refills during a test at one instant.
func kindSpecs(c int64) []algorithms.Spec {
	return []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: c, Window: time.Minute},
		{Algorithm: algorithms.SlidingLog, Limit: c, Window: time.Minute},
		{Algorithm: algorithms.SlidingWindow, Limit: c, Window: time.Minute},
		{Algorithm: algorithms.SlidingBuckets, Limit: c, Window: time.Minute, Buckets: 6},
		{Algorithm: algorithms.TokenBucket, Limit: c / 2, Window: time.Second, Burst: c},
		{Algorithm: algorithms.LeakyBucket, Limit: c / 2, Window: time.Second, Burst: c},
		// floor(MaxDelay·L/W) + 1 = c
		{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: time.Second, MaxDelay: time.Duration(c-1) * 100 * time.Millisecond},
	}
}
