package algotest

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// A boundaryStep is one call of a boundary case and what it must decide:
// every field named in want (by its Decision field name, one of
// boundaryFields) is compared, in the order of boundaryFields, and the
// whole decision is also compared with the Model.
type boundaryStep struct {
	at    time.Duration
	check algorithms.Check
	want  map[string]any
	with  []algorithms.Check // more checks in the same call, after check
}

// boundaryFields are the Decision fields a boundaryStep may name, in the
// order of Decision's fields: mismatches are reported in this order.
var boundaryFields = []string{"Allowed", "Remaining", "RetryAfter", "ResetAfter", "NextAfter", "Delay"}

// A boundaryCase pins a decision at a boundary that random traces reach
// rarely: each was written for a mutant of the stores' code (a comparison
// or a rounding changed) that the rest of the suite let through.
type boundaryCase struct {
	name  string
	steps []boundaryStep
}

var (
	// W/L = 333,333,333⅓ ns: a request's emission ends a third of a
	// nanosecond after a whole nanosecond.
	token3s  = algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 3, Window: time.Second}
	queue3s  = algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 3, Window: time.Second}
	queue3sD = algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 3, Window: time.Second, MaxDelay: time.Second}
	// W/L = 1,234,285,714 + 2/7 ns, and Capacity·W above 2^52 (the Redis
	// store's wide arithmetic).
	tokenWide = algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 70_000, Window: 24 * time.Hour}
	// W/L = 617,142,857 + 1/7 ns.
	leakyWide = algorithms.Spec{Algorithm: algorithms.LeakyBucket, Limit: 70_000, Window: 12 * time.Hour, Burst: 140_000}
)

// fullWithinANanosecond is the case of a bucket (or queue) whose deficit,
// at a whole nanosecond, is a fraction of one: one unit admitted at 0 s
// leaves it full again at (W/L) ns, which is not whole; at floor(W/L) ns
// it still lacks a fraction of a unit, so one unit less is available, and
// ResetAfter and NextAfter are 1 ns.
func fullWithinANanosecond(spec algorithms.Spec, emission time.Duration) boundaryCase {
	c := spec.Capacity()
	return boundaryCase{
		name: fmt.Sprintf("%s_%d_per_%v_full_within_a_nanosecond", spec.Algorithm, spec.Limit, spec.Window),
		steps: []boundaryStep{
			{0, algorithms.Check{Spec: spec, Key: "k"}, map[string]any{"Allowed": true, "Remaining": c - 1, "ResetAfter": emission + 1}, nil},
			{emission, algorithms.Check{Spec: spec, Key: "k", Cost: c}, map[string]any{"Allowed": false, "Remaining": c - 1, "RetryAfter": time.Duration(1), "ResetAfter": time.Duration(1), "NextAfter": time.Duration(1)}, nil},
			{emission + 1, algorithms.Check{Spec: spec, Key: "k", Cost: c}, map[string]any{"Allowed": true, "Remaining": int64(0)}, nil},
		},
	}
}

// closedHour is a check that is denied once its key has been taken once.
var closedHour = algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}, Key: "closed"}

// fullBesideDenied is the case of a full bucket or empty queue reported by
// a call that another check denies: the check passes, consumes nothing,
// and reports its key as it is, Remaining the capacity and nothing to wait
// for (NextAfter 0: Remaining cannot grow).
func fullBesideDenied(spec algorithms.Spec) boundaryCase {
	c := spec.Capacity()
	full := map[string]any{"Allowed": true, "Remaining": c, "RetryAfter": time.Duration(0), "ResetAfter": time.Duration(0), "NextAfter": time.Duration(0), "Delay": time.Duration(0)}
	return boundaryCase{
		name: fmt.Sprintf("%s_%d_per_%v_full_beside_a_denied_check", spec.Algorithm, spec.Limit, spec.Window),
		steps: []boundaryStep{
			{0, closedHour, map[string]any{"Allowed": true}, nil},
			{time.Second, algorithms.Check{Spec: spec, Key: "k"}, full, []algorithms.Check{closedHour}},
			{time.Second, algorithms.Check{Spec: spec, Key: "k", Cost: c}, full, []algorithms.Check{closedHour}},
		},
	}
}

// logManyPruned is the case of a sliding_log key from which more than 32
// events leave the window at once while a newer one stays (the memory store
// then compacts its log): 40 requests at 0, 1, ..., 39 ms and one at 900 ms,
// then at 1039.5 ms the first 40 have left and only the one of 900 ms
// counts. It leaves at 1.9 s + 1 ns.
func logManyPruned() boundaryCase {
	spec := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 100, Window: time.Second}
	bc := boundaryCase{name: "sliding_log_many_events_leave_at_once"}
	for i := range 40 {
		bc.steps = append(bc.steps, boundaryStep{time.Duration(i) * time.Millisecond, algorithms.Check{Spec: spec, Key: "k"}, map[string]any{"Allowed": true, "Remaining": int64(99 - i)}, nil})
	}
	at := 1039500 * time.Microsecond
	bc.steps = append(bc.steps,
		boundaryStep{900 * time.Millisecond, algorithms.Check{Spec: spec, Key: "k"}, map[string]any{"Allowed": true, "Remaining": int64(59)}, nil},
		// The window (38.5 ms, 1039.5 ms] holds the 900 ms event and this one.
		boundaryStep{at, algorithms.Check{Spec: spec, Key: "k"}, map[string]any{"Allowed": true, "Remaining": int64(98), "ResetAfter": time.Second + 1, "NextAfter": 1900*time.Millisecond + 1 - at}, nil},
		boundaryStep{at, algorithms.Check{Spec: spec, Key: "k", Cost: 99}, map[string]any{"Allowed": false, "Remaining": int64(98), "RetryAfter": 1900*time.Millisecond + 1 - at, "ResetAfter": time.Second + 1}, nil},
		boundaryStep{1900*time.Millisecond + 1, algorithms.Check{Spec: spec, Key: "k", Cost: 99}, map[string]any{"Allowed": true, "Remaining": int64(0)}, nil},
	)
	return bc
}

// boundaryCases are the cases of runBoundaries, at instants from Base.
var boundaryCases = []boundaryCase{
	fullWithinANanosecond(token3s, 333_333_333),
	fullWithinANanosecond(tokenWide, 1_234_285_714),
	fullWithinANanosecond(leakyWide, 617_142_857),
	fullBesideDenied(token3s),
	fullBesideDenied(tokenWide),
	fullBesideDenied(leakyWide),
	fullBesideDenied(queue3sD),
	logManyPruned(),
	{
		// A queue that admits only a request that can leave at once
		// (MaxDelay 0): one admitted at 0 s leaves the queue free at
		// 333,333,333⅓ ns, so a request at 333,333,333 ns would wait a
		// third of a nanosecond, and is denied for 1 ns.
		name: "leaky_queue_free_within_a_nanosecond",
		steps: []boundaryStep{
			{0, algorithms.Check{Spec: queue3s, Key: "k"}, map[string]any{"Allowed": true, "Delay": time.Duration(0), "Remaining": int64(0), "ResetAfter": time.Duration(333_333_334), "NextAfter": time.Duration(333_333_334)}, nil},
			{333_333_333, algorithms.Check{Spec: queue3s, Key: "k"}, map[string]any{"Allowed": false, "Remaining": int64(0), "RetryAfter": time.Duration(1), "ResetAfter": time.Duration(1), "NextAfter": time.Duration(1)}, nil},
			{333_333_334, algorithms.Check{Spec: queue3s, Key: "k"}, map[string]any{"Allowed": true, "Delay": time.Duration(0)}, nil},
			// With MaxDelay 1 s (capacity 4): two admitted at 0 s free the
			// queue at 666,666,666⅔ ns; at 666,666,666 ns one more waits
			// ⅔ ns, so its Delay is 1 ns, and after it the queue is free at 1 s:
			// floor((3·10^9 − 1,000,000,002)/10^9) + 1 = 2 more fit.
			{0, algorithms.Check{Spec: queue3sD, Key: "d", Cost: 2}, map[string]any{"Allowed": true, "Remaining": int64(2)}, nil},
			{666_666_666, algorithms.Check{Spec: queue3sD, Key: "d"}, map[string]any{"Allowed": true, "Delay": time.Duration(1), "Remaining": int64(2)}, nil},
		},
	},
}

// bystander is the check that, beside a boundary step, makes the call one
// of several kinds: a store may decide a single check, or checks of the
// cell kinds only, on a path of its own (the Redis store's fast path), and
// every other call on its general path. It is always admitted.
var bystander = algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: algorithms.MaxLimit, Window: time.Second}, Key: "bystander"}

// runBoundaries runs boundaryCases, each on a fresh store, twice: each
// step a call of its one check ("alone"), and each step a call of its
// check and the bystander ("beside_sliding_log").
func runBoundaries(t *testing.T, h Harness) {
	for _, bc := range boundaryCases {
		for _, beside := range []bool{false, true} {
			name := bc.name + "/alone"
			if beside {
				name = bc.name + "/beside_sliding_log"
			}
			t.Run(name, func(t *testing.T) { runBoundaryCase(t, h, bc, beside) })
		}
	}
}

// runBoundaryCase runs bc on a fresh store, each check beside the
// bystander when beside is true.
func runBoundaryCase(t *testing.T, h Harness, bc boundaryCase, beside bool) {
	e := newEnv(t, h)
	for i, st := range bc.steps {
		checks := append([]algorithms.Check{st.check}, st.with...)
		if beside {
			checks = append(checks, bystander)
		}
		d := e.take(st.at, checks...)[0]
		where := fmt.Sprintf("step %d, Take(%s) at +%v", i+1, formatChecks(checks), st.at)
		for _, field := range slices.Sorted(maps.Keys(st.want)) {
			if !slices.Contains(boundaryFields, field) {
				t.Fatalf("%s: unknown field %q", where, field)
			}
		}
		got := map[string]any{"Allowed": d.Allowed, "Remaining": d.Remaining, "RetryAfter": d.RetryAfter,
			"ResetAfter": d.ResetAfter, "NextAfter": d.NextAfter, "Delay": d.Delay}
		for _, field := range boundaryFields {
			if want, ok := st.want[field]; ok && got[field] != want {
				t.Errorf("%s: %s = %v, want %v", where, field, got[field], want)
			}
		}
	}
}
