package algotest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// A Trace is a sequence of Take calls at given instants, for replaying the
// same traffic against several stores (or a store and the [Model]) and
// comparing their decisions.
type Trace struct {
	// Seed and N are the arguments of RandomTrace that made the trace (0
	// for a trace built by hand); they are printed in reports so a failure
	// can be reproduced.
	Seed uint64
	N    int
	// Start is the instant of offset 0. It is deliberately not aligned to
	// any window.
	Start  time.Time
	Steps  []Step
	skew   bool // made by RandomSkewTrace
	shrunk bool // a subset of the steps of the trace named
}

// A Step is one Take call: its checks, decided at Start+At. At never
// decreases along a RandomTrace; along a RandomSkewTrace it does.
type Step struct {
	At     time.Duration
	Checks []algorithms.Check
}

// Len returns the number of Take calls of tr.
func (tr Trace) Len() int { return len(tr.Steps) }

// traceWindows are the time scales of random traces: 1 ms to 1 h, with some
// windows that are not round numbers of anything, and MaxWindow (24 h), where
// Limit·Window products need more than 64 bits.
var traceWindows = []time.Duration{
	time.Millisecond, 1_000_007, 3 * time.Millisecond, 10 * time.Millisecond,
	250 * time.Millisecond, 999_999_937, time.Second, 7 * time.Second,
	30 * time.Second, time.Minute, 10 * time.Minute, time.Hour, algorithms.MaxWindow,
}

// traceKeys are the keys of random traces; some hold characters that a
// store building keys by concatenation must escape or hash (Redis hash tags,
// separators, non-ASCII), one is empty and one is 1000 bytes long.
var traceKeys = []string{"a", "b", "user:42{x}", "10.0.0.1|ü", "", strings.Repeat("long/", 200)}

// RandomTrace returns a deterministic random trace of n steps for seed.
//
// Each trace works at one time scale (a window between 1 ms and 24 h) with
// two to four specs of any kind near that scale (Burst different from Limit,
// Buckets > 1, MaxDelay > 0 included; sometimes two specs that differ in a
// single field, whose states must stay apart) and two to six keys. It mixes
// bursts at one instant, runs of one client's requests, short and long
// gaps, instants just around window and sub-window boundaries, and idle
// gaps of many windows. Most steps hold one check, some two or three (on
// the same key and spec too). Costs are mostly 1 to 3 (0, meaning 1,
// included); a few are anything up to the capacity, so that counts near
// MaxLimit meet long windows (every fifth seed's first spec has a Limit
// or Burst near MaxLimit). No cost exceeds its spec's capacity, and the
// checks of one key and spec in a step stay within what the key can ever
// admit at once (see [algorithms.ValidateChecks]): every step is valid.
//
// Most traces start in 2027; those of seeds 1, 6, 11, ... in 1968 (negative
// Unix nanoseconds), and those of seeds 3, 8, 13, ... end in 2262, ten days
// before Unix nanoseconds overflow int64.
//
// The first spec cycles through the seven kinds with the seed, so seeds 0
// to 6 cover them all, and seeds 7 to 13 cover them again with Burst !=
// Limit, Buckets > 1 and MaxDelay > 0.
func RandomTrace(seed uint64, n int) Trace {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	scale := traceWindows[rng.IntN(len(traceWindows))]
	specs := make([]algorithms.Spec, 2+rng.IntN(3))
	for i := range specs {
		w := scale
		if i > 0 && rng.IntN(4) == 0 {
			w = traceWindows[rng.IntN(len(traceWindows))]
		}
		specs[i] = randomSpec(rng, w)
		if i > 0 && rng.IntN(4) == 0 {
			specs[i] = variant(rng, specs[0]) // state must not be shared between the two
		}
		if i == 0 {
			kinds := uint64(len(algorithms.Kinds))
			var limit int64
			if seed%5 == 4 { // counts near MaxLimit
				limit = algorithms.MaxLimit - rng.Int64N(1000)
			}
			specs[i] = randomSpecOf(rng, algorithms.Kinds[seed%kinds], w, limit)
			for try := 0; seed/kinds%2 == 1 && !rich(specs[i]) && try < 100; try++ {
				specs[i] = randomSpecOf(rng, algorithms.Kinds[seed%kinds], w, limit)
			}
		}
	}
	keys := traceKeys[:2+rng.IntN(len(traceKeys)-1)]
	start := Base
	if seed%5 == 1 { // before 1970: negative Unix nanoseconds
		start = time.Unix(-400*24*3600, 0)
	}
	offset := time.Duration(rng.Int64N(int64(24 * time.Hour)))
	tr := Trace{Seed: seed, N: n, Start: start.Add(offset)}
	var at time.Duration
	for range n {
		at += randomGap(rng, tr.Start.Add(at), scale, specs)
		k := 1
		switch r := rng.IntN(20); {
		case r == 0:
			k = 3
		case r < 3:
			k = 2
		}
		if len(tr.Steps) > 0 && rng.IntN(2) == 0 {
			// Again what the last step asked: runs of one client's requests.
			tr.Steps = append(tr.Steps, Step{At: at, Checks: tr.Steps[len(tr.Steps)-1].Checks})
			continue
		}
		st := Step{At: at, Checks: make([]algorithms.Check, k)}
		for j := range st.Checks {
			c := algorithms.Check{Spec: specs[rng.IntN(len(specs))], Key: keys[rng.IntN(len(keys))]}
			if j > 0 && rng.IntN(3) == 0 {
				c = st.Checks[j-1] // the same key and spec twice in one call
			}
			switch r := rng.IntN(100); {
			case r < 40:
				c.Cost = 1 + rng.Int64N(min(3, c.Spec.Capacity()))
			case r < 46: // half to all of the capacity: large counts and products
				cp := c.Spec.Capacity()
				c.Cost = cp - rng.Int64N(cp/2+1)
			}
			st.Checks[j] = c
		}
		st.Checks = FitRepeats(st.Checks)
		tr.Steps = append(tr.Steps, st)
	}
	if seed%5 == 3 && len(tr.Steps) > 0 {
		// End ten days and a bit before Unix nanoseconds overflow int64 (in 2262).
		last := time.Unix(0, math.MaxInt64).Add(-10*24*time.Hour - offset)
		tr.Start = last.Add(-tr.Steps[len(tr.Steps)-1].At)
	}
	return tr
}

// RandomSkewTrace returns RandomTrace(seed, n) as seen by a store shared by
// three app hosts whose clocks disagree: each step comes from one host, the
// first exact, the second behind by up to one time scale, the third by up
// to three; now and then a host's clock also steps back by up to two hours.
// So instants go back, by a little or a lot, as the package documentation
// of algorithms describes under "Time that goes back".
func RandomSkewTrace(seed uint64, n int) Trace {
	tr := RandomTrace(seed, n)
	rng := rand.New(rand.NewPCG(seed, 0x5eed5ca1e))
	scale := time.Duration(0)
	for _, st := range tr.Steps {
		for _, c := range st.Checks {
			scale = max(scale, c.Spec.Window)
		}
	}
	skew := []time.Duration{0, -time.Duration(rng.Int64N(int64(scale) + 1)), -time.Duration(rng.Int64N(3*int64(scale) + 1))}
	steps := make([]Step, len(tr.Steps))
	for i, st := range tr.Steps {
		h := rng.IntN(len(skew))
		if rng.IntN(200) == 0 {
			skew[h] -= time.Duration(rng.Int64N(int64(2 * time.Hour)))
		}
		steps[i] = Step{At: st.At + skew[h], Checks: st.Checks}
	}
	tr.Steps = steps
	tr.skew = true
	return tr
}

// rich reports whether s uses its kind's optional parameter: Burst other
// than Limit, Buckets > 1, MaxDelay > 0.
func rich(s algorithms.Spec) bool {
	switch s.Algorithm {
	case algorithms.TokenBucket, algorithms.LeakyBucket:
		return s.Burst != 0 && s.Burst != s.Limit
	case algorithms.SlidingBuckets:
		return s.Buckets > 1
	case algorithms.LeakyQueue:
		return s.MaxDelay > 0
	}
	return true
}

// variant returns a valid spec that differs from s in one field only.
func variant(rng *rand.Rand, s algorithms.Spec) algorithms.Spec {
	for range 20 {
		v := s
		switch rng.IntN(3) {
		case 0:
			v.Limit = s.Limit%algorithms.MaxLimit + 1
		case 1:
			v.Window = s.Window + algorithms.MinWindow
		default:
			switch s.Algorithm {
			case algorithms.TokenBucket, algorithms.LeakyBucket:
				v.Burst = s.Limit + 1 + s.Burst%3
			case algorithms.SlidingBuckets:
				v.Buckets = 1
				if s.Buckets == 1 {
					v.Buckets = 2
				}
				v.Window = s.Window * 2 // a window Buckets divides
			case algorithms.LeakyQueue:
				v.MaxDelay = s.MaxDelay + s.Window/4
			default:
				v.Limit = max(1, s.Limit-1)
			}
		}
		if v != s && v.Validate() == nil {
			return v
		}
	}
	return s
}

// randomGap returns the wait before the next step.
func randomGap(rng *rand.Rand, now time.Time, scale time.Duration, specs []algorithms.Spec) time.Duration {
	switch r := rng.IntN(100); {
	case r < 40: // a burst at one instant
		return 0
	case r < 75:
		return time.Duration(rng.Int64N(int64(scale)/32 + 1))
	case r < 85:
		return time.Duration(rng.Int64N(int64(scale) + 1))
	case r < 95: // just around the next boundary of a spec's window or sub-window
		s := specs[rng.IntN(len(specs))]
		w := int64(s.Window)
		if s.Buckets > 1 && rng.IntN(2) == 0 {
			w /= int64(s.Buckets)
		}
		t := now.UnixNano()
		next := (t/w + 1) * w
		gap := next - t + rng.Int64N(5) - 2
		return time.Duration(max(0, gap))
	case r < 99: // idle for a few windows
		return time.Duration(rng.Int64N(5*int64(scale) + 1))
	}
	return time.Duration(rng.Int64N(int64(3 * time.Hour)))
}

// randomWindow returns a window for a random spec, 1 ms to 24 h.
func randomWindow(rng *rand.Rand) time.Duration {
	if rng.IntN(10) == 0 {
		return algorithms.MinWindow + time.Duration(rng.Int64N(int64(algorithms.MaxWindow-algorithms.MinWindow)))
	}
	return traceWindows[rng.IntN(len(traceWindows))]
}

func randomSpec(rng *rand.Rand, w time.Duration) algorithms.Spec {
	return randomSpecOf(rng, algorithms.Kinds[rng.IntN(len(algorithms.Kinds))], w, 0)
}

// randomSpecOf returns a valid random spec of kind k with window w, mostly
// with small limits (so that traces hit them) and sometimes with large ones
// (so that arithmetic is exercised near the bounds). A limit other than 0 is
// used as the Limit, or as the Burst of the buckets when it cannot be the
// Limit.
func randomSpecOf(rng *rand.Rand, k algorithms.Kind, w time.Duration, limit int64) algorithms.Spec {
	for try := 0; ; try++ {
		s := algorithms.Spec{Algorithm: k, Window: w}
		switch r := rng.IntN(20); {
		case r < 14:
			s.Limit = 1 + rng.Int64N(6)
		case r < 17:
			s.Limit = 9 + rng.Int64N(100)
		case r < 19:
			s.Limit = 1 + rng.Int64N(1_000_000)
		default:
			s.Limit = algorithms.MaxLimit - rng.Int64N(3)
		}
		switch k {
		case algorithms.TokenBucket, algorithms.LeakyBucket:
			switch rng.IntN(3) {
			case 0: // Burst 0 means Limit
			case 1:
				s.Burst = 1 + rng.Int64N(s.Limit)
			case 2:
				s.Burst = s.Limit + 1 + rng.Int64N(2*s.Limit)
			}
		case algorithms.SlidingBuckets:
			s.Buckets = 1
			for _, b := range []int{60, 12, 10, 6, 5, 4, 3, 2} {
				if int64(w)%int64(b) == 0 && rng.IntN(3) == 0 {
					s.Buckets = b
					break
				}
			}
		case algorithms.LeakyQueue:
			if rng.IntN(6) > 0 {
				s.MaxDelay = time.Duration(rng.Int64N(3*int64(w) + 1))
			}
		}
		if limit != 0 && try < 1000 {
			s.Limit = limit
			if s.Burst != 0 {
				s.Burst, s.Limit = limit, 1+rng.Int64N(limit)
			}
			if s.MaxDelay != 0 {
				s.MaxDelay = time.Duration(rng.Int64N(int64(w)))
			}
		}
		if s.Validate() == nil {
			return s
		}
	}
}

// Replay runs tr against store, setting clock to each step's instant before
// its Take, and returns the decisions of every step. On an error it returns
// the decisions so far and the error, which names the step.
func Replay(ctx context.Context, store algorithms.Store, clock *Clock, tr Trace) ([][]algorithms.Decision, error) {
	out := make([][]algorithms.Decision, 0, len(tr.Steps))
	for i, st := range tr.Steps {
		clock.Set(tr.Start.Add(st.At))
		ds, err := store.Take(ctx, st.Checks...)
		if err != nil {
			return out, fmt.Errorf("algotest: step %d of %s: %w", i, tr.name(), err)
		}
		if len(ds) != len(st.Checks) {
			return out, fmt.Errorf("algotest: step %d of %s: %d decisions for %d checks", i, tr.name(), len(ds), len(st.Checks))
		}
		out = append(out, ds)
	}
	return out, nil
}

// ReplayModel runs tr on a fresh Model and returns its decisions.
func ReplayModel(tr Trace) [][]algorithms.Decision {
	m := NewModel()
	out := make([][]algorithms.Decision, 0, len(tr.Steps))
	for _, st := range tr.Steps {
		ds, err := m.TakeAt(tr.Start.Add(st.At), st.Checks...)
		if err != nil {
			ds = make([]algorithms.Decision, len(st.Checks)) // invalid step: nothing to compare but the error
		}
		out = append(out, ds)
	}
	return out
}

// Diff compares the decisions got and want of replays of tr, step by step
// and field by field. It returns "" when they agree; otherwise a report of
// the first difference: the step, every field that differs, and the steps
// of tr that can affect it (state is per (Spec, Key) pair, so those steps
// alone reproduce it), also as a Go literal to paste into a regression test.
func Diff(tr Trace, got, want [][]algorithms.Decision) string {
	for i := range min(len(got), len(want)) {
		for j := range min(len(got[i]), len(want[i])) {
			if got[i][j] != want[i][j] {
				return tr.report(i, j, got[i][j], want[i][j])
			}
		}
		if len(got[i]) != len(want[i]) {
			return fmt.Sprintf("%s step %d: %d decisions, want %d", tr.name(), i, len(got[i]), len(want[i]))
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%s: %d steps decided, want %d", tr.name(), len(got), len(want))
	}
	return ""
}

// CompareModel replays tr on store and on a fresh Model and returns their
// Diff ("" when the store agrees with the model on every field of every
// decision), or the store's error.
func CompareModel(ctx context.Context, store algorithms.Store, clock *Clock, tr Trace) (string, error) {
	got, err := Replay(ctx, store, clock, tr)
	if err != nil {
		return "", err
	}
	return Diff(tr, got, ReplayModel(tr)), nil
}

func (tr Trace) name() string {
	name := "trace"
	switch {
	case tr.Seed == 0 && tr.N == 0:
	case tr.skew:
		name = fmt.Sprintf("RandomSkewTrace(%d, %d)", tr.Seed, tr.N)
	default:
		name = fmt.Sprintf("RandomTrace(%d, %d)", tr.Seed, tr.N)
	}
	if tr.shrunk {
		name += ", shrunk,"
	}
	return name
}

// maxReportSteps bounds the reproducing steps printed in a report.
const maxReportSteps = 60

func (tr Trace) report(i, j int, got, want algorithms.Decision) string {
	var b strings.Builder
	st := tr.Steps[i]
	fmt.Fprintf(&b, "%s: step %d, check %d (%s): decisions differ:\n", tr.name(), i, j, formatCheck(st.Checks[j]))
	fmt.Fprintf(&b, "\tgot  %+v\n\twant %+v\n", got, want)
	for _, f := range fieldDiffs(got, want) {
		fmt.Fprintf(&b, "\t%s\n", f)
	}
	keep := tr.relevant(i)
	fmt.Fprintf(&b, "Steps that reach the (Spec, Key) pairs of step %d (%d of them), Start = %s (Unix %d ns):\n",
		i, len(keep), tr.Start.UTC().Format(time.RFC3339Nano), tr.Start.UnixNano())
	shown := keep
	if len(shown) > maxReportSteps {
		fmt.Fprintf(&b, "\t... %d earlier steps\n", len(shown)-maxReportSteps)
		shown = shown[len(shown)-maxReportSteps:]
	}
	for _, k := range shown {
		fmt.Fprintf(&b, "\t%5d %s\n", k, tr.Steps[k].format())
	}
	if len(keep) <= maxReportSteps {
		b.WriteString("As a Go literal (its last step is the one that differs):\n")
		fmt.Fprintf(&b, "\talgotest.Trace{Start: time.Unix(0, %d), Steps: []algotest.Step{\n", tr.Start.UnixNano())
		for _, k := range keep {
			fmt.Fprintf(&b, "\t\t%s,\n", tr.Steps[k].goString())
		}
		b.WriteString("\t}}")
	}
	return strings.TrimRight(b.String(), "\n")
}

// relevant returns the indices of the steps up to i that can affect the
// decisions of step i: those touching its (Spec, Key) pairs, and, since a
// denied call consumes nothing, those touching any pair that shares a call
// with a pair already reached, to a fixed point.
func (tr Trace) relevant(i int) []int {
	reached := make(map[modelKey]bool)
	for _, c := range tr.Steps[i].Checks {
		reached[modelKey{c.Spec, c.Key}] = true
	}
	keep := make([]bool, i+1)
	for changed := true; changed; {
		changed = false
		for k := i; k >= 0; k-- {
			if keep[k] {
				continue
			}
			touches := false
			for _, c := range tr.Steps[k].Checks {
				touches = touches || reached[modelKey{c.Spec, c.Key}]
			}
			if !touches {
				continue
			}
			keep[k], changed = true, true
			for _, c := range tr.Steps[k].Checks {
				reached[modelKey{c.Spec, c.Key}] = true
			}
		}
	}
	var out []int
	for k, ok := range keep {
		if ok {
			out = append(out, k)
		}
	}
	return out
}

// goString formats st as a Go composite literal.
func (st Step) goString() string {
	cs := make([]string, len(st.Checks))
	for i, c := range st.Checks {
		cs[i] = fmt.Sprintf("%#v", c)
	}
	return fmt.Sprintf("{At: %d, Checks: []algorithms.Check{%s}}", int64(st.At), strings.Join(cs, ", "))
}

func (st Step) format() string {
	cs := make([]string, len(st.Checks))
	for i, c := range st.Checks {
		cs[i] = formatCheck(c)
	}
	return fmt.Sprintf("+%v Take(%s)", st.At, strings.Join(cs, ", "))
}

// FitRepeats returns checks, valid checks of one call, with each check
// that follows others on its key and Spec brought within what that key can
// ever admit at once (see [algorithms.ValidateChecks]): its cost lowered
// to the room the earlier ones leave below the capacity it is judged at
// (its Limit, when it has one), or, where they leave none, the check
// left out (a leaky_queue check, which may have any cost, is left out when
// the earlier ones hold the capacity or more). The first check of each
// key stays as it is, so the result is empty only when checks is. For
// generators of random calls, every one of which must be valid. It does
// not change checks.
func FitRepeats(checks []algorithms.Check) []algorithms.Check {
	out := make([]algorithms.Check, 0, len(checks))
	for _, c := range checks {
		var ahead int64
		for _, o := range out {
			if o.Spec == c.Spec && o.Key == c.Key {
				ahead += cost(o)
			}
		}
		if ahead > 0 {
			room := c.Judged().Capacity() - ahead
			if room < 1 {
				continue
			}
			if c.Spec.Algorithm != algorithms.LeakyQueue && cost(c) > room {
				c.Cost = room // a queue takes a check of any cost while ahead < C
			}
		}
		out = append(out, c)
	}
	return out
}

func formatCheck(c algorithms.Check) string {
	s := fmt.Sprintf("{%s key=%q", c.Spec, c.Key)
	if c.Cost != 0 {
		s += fmt.Sprintf(" cost=%d", c.Cost)
	}
	if c.Limit != 0 {
		s += fmt.Sprintf(" judged at %d", c.Limit)
	}
	return s + "}"
}

func fieldDiffs(got, want algorithms.Decision) []string {
	var out []string
	add := func(name string, g, w any) {
		if g != w {
			out = append(out, fmt.Sprintf("%s = %v, want %v", name, g, w))
		}
	}
	add("Allowed", got.Allowed, want.Allowed)
	add("Limit", got.Limit, want.Limit)
	add("Remaining", got.Remaining, want.Remaining)
	add("RetryAfter", got.RetryAfter, want.RetryAfter)
	add("ResetAfter", got.ResetAfter, want.ResetAfter)
	add("NextAfter", got.NextAfter, want.NextAfter)
	add("Delay", got.Delay, want.Delay)
	return out
}
