package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/redis/go-redis/v9"
)

// Checks judged at a limit below their Spec's (algorithms.Check.Limit):
// they count in the state kept under the Spec (its Redis keys), and are
// judged, and reported, at their own limit. The figures below are worked
// out by hand from the kinds' rules in DESIGN.md; the clock starts at
// judgedT0, the start of a 10 s window (and of a 1 s sub-window).

var judgedT0 = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

// judgedStep is one Take of one check at judgedT0+at: cost units judged
// at limit (0: at Spec.Limit), and the decision it must get.
type judgedStep struct {
	at    time.Duration
	limit int64
	cost  int64
	want  algorithms.Decision
}

// admit and deny spell a step's decision: Limit, Remaining, then
// ResetAfter and NextAfter (admit), RetryAfter, ResetAfter and NextAfter
// (deny).
func admit(limit, remaining int64, reset, next time.Duration) algorithms.Decision {
	return algorithms.Decision{Allowed: true, Limit: limit, Remaining: remaining, ResetAfter: reset, NextAfter: next}
}

func deny(limit, remaining int64, retry, reset, next time.Duration) algorithms.Decision {
	return algorithms.Decision{Limit: limit, Remaining: remaining, RetryAfter: retry, ResetAfter: reset, NextAfter: next}
}

// judgedPad is a check on a key of its own that every Take of the "main"
// paths adds: a sliding_log, which the fast path (fast.lua) never takes,
// so that the Take's other checks are decided by main.lua. It always
// passes (a million a second).
var judgedPad = algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 1_000_000, Window: time.Second}, Key: "pad"}

// eachJudgedPath runs f, in a subtest each, on a store of its own on an
// injected clock (reading judgedT0) for every path a Take can take:
// through the function library and as the script (EVALSHA), each on the
// fast path (a Take of f's checks alone: fast.lua for fixed_window and
// sliding_window) and on the general path (f's checks then judgedPad:
// main.lua); and on the memory store, which must agree. take returns the
// decisions of f's checks.
func eachJudgedPath(t *testing.T, f func(t *testing.T, clk *manualClock, take func(checks ...algorithms.Check) []algorithms.Decision)) {
	for _, client := range []struct {
		name string
		c    func(testing.TB) *redis.Client
	}{{"function", newClient}, {"script", noFunctionsClient}, {"memory", nil}} {
		for _, pad := range []bool{false, true} {
			name := client.name + "/fast"
			if pad {
				name = client.name + "/main"
			}
			t.Run(name, func(t *testing.T) {
				clk := &manualClock{t: judgedT0}
				var s algorithms.Store
				if client.c == nil {
					mem, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
					if err != nil {
						t.Fatal(err)
					}
					s = mem
				} else {
					s = clockedStore(t, client.c(t), clk)
				}
				take := func(checks ...algorithms.Check) []algorithms.Decision {
					t.Helper()
					all := checks
					if pad {
						all = append(slices.Clone(checks), judgedPad)
					}
					ds, err := s.Take(context.Background(), all...)
					if err != nil {
						t.Fatalf("at %s: Take(%+v): %v", clk.t.Sub(judgedT0), checks, err)
					}
					if pad && !ds[len(ds)-1].Allowed {
						t.Fatalf("at %s: the pad check was denied: %+v", clk.t.Sub(judgedT0), ds)
					}
					return ds[:len(checks)]
				}
				f(t, clk, take)
			})
		}
	}
}

// runJudgedSteps takes each step's check of spec on key "k" in turn on
// every path, and compares every decision with the step's.
func runJudgedSteps(t *testing.T, spec algorithms.Spec, steps []judgedStep) {
	t.Helper()
	eachJudgedPath(t, func(t *testing.T, clk *manualClock, take func(...algorithms.Check) []algorithms.Decision) {
		for i, st := range steps {
			clk.t = judgedT0.Add(st.at)
			c := algorithms.Check{Spec: spec, Key: "k", Cost: st.cost, Limit: st.limit}
			if got := take(c)[0]; got != st.want {
				t.Fatalf("step %d at %s, cost %d judged at %d:\ngot  %+v\nwant %+v", i, st.at, st.cost, st.limit, got, st.want)
			}
		}
	})
}

// tenAt returns the ten cost-1 steps at instant at, judged at limit on a
// key that has counted limit − 10 (40 judged at 50, 100 at a raised
// 110): Remaining 9 down to 0, their ResetAfter reset and NextAfter
// next(i), i = 1..10.
func tenAt(limit int64, at, reset time.Duration, next func(i int64) time.Duration) []judgedStep {
	var steps []judgedStep
	for i := int64(1); i <= 10; i++ {
		steps = append(steps, judgedStep{at, limit, 1, admit(limit, 10-i, reset, next(i))})
	}
	return steps
}

func constant(d time.Duration) func(int64) time.Duration {
	return func(int64) time.Duration { return d }
}

// TestJudgedFixedWindow: fixed_window, 100 per 10 s. 40 counted at 2 s;
// judged at 50, exactly 10 more pass at 3 s (the window ends in 7 s),
// then one is denied until the window's end; judged at the Spec's 100
// the same state has 49 left (one state: the 50 counted at either limit);
// with 81 counted, a check judged at 50 gets Remaining 0 and waits for
// the window's end; in the next window it has its 50 again.
func TestJudgedFixedWindow(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: 10 * time.Second}
	s := time.Second
	steps := []judgedStep{{2 * s, 0, 40, admit(100, 60, 8*s, 8*s)}}
	steps = append(steps, tenAt(50, 3*s, 7*s, constant(7*s))...)
	steps = append(steps,
		judgedStep{3 * s, 50, 1, deny(50, 0, 7*s, 7*s, 7*s)},
		judgedStep{3 * s, 0, 1, admit(100, 49, 7*s, 7*s)},   // the Spec's limit: 51 counted
		judgedStep{4 * s, 100, 1, admit(100, 48, 6*s, 6*s)}, // Limit = Spec.Limit is the Spec's
		judgedStep{4 * s, 0, 29, admit(100, 19, 6*s, 6*s)},  // 81 counted
		judgedStep{5 * s, 50, 1, deny(50, 0, 5*s, 5*s, 5*s)},
		judgedStep{5 * s, 80, 1, deny(80, 0, 5*s, 5*s, 5*s)},
		judgedStep{5 * s, 82, 1, admit(82, 0, 5*s, 5*s)}, // 82 counted
		judgedStep{10 * s, 50, 1, admit(50, 49, 10*s, 10*s)},
	)
	runJudgedSteps(t, spec, steps)
}

// TestJudgedSlidingLog: sliding_log, 100 per 10 s; an event leaves the
// window 10 s + 1 ns after it. 20 counted at 0 s and 20 at 1 s; judged at
// 50, exactly 10 more pass at 2 s, each with NextAfter 8 s + 1 ns (when
// the 20 of 0 s leave); then one is denied for as long, and one of cost
// 25 until the 20 of 1 s leave too (9 s + 1 ns); at the Spec's 100, 49
// are left. With 80 counted (29 more at 3 s), a check judged at 50 at 4 s
// waits until 40 have left (the 20 of 1 s, 7 s + 1 ns); at 10 s + 1 ns,
// the 20 of 0 s gone, 60 still count (1 s more); at 11 s + 1 ns, 40 count
// and it passes with 9 left.
func TestJudgedSlidingLog(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 100, Window: 10 * time.Second}
	s, ns := time.Second, time.Nanosecond
	steps := []judgedStep{
		{0, 0, 20, admit(100, 80, 10*s+ns, 10*s+ns)},
		{1 * s, 0, 20, admit(100, 60, 10*s+ns, 9*s+ns)},
	}
	steps = append(steps, tenAt(50, 2*s, 10*s+ns, constant(8*s+ns))...)
	steps = append(steps,
		judgedStep{2 * s, 50, 1, deny(50, 0, 8*s+ns, 10*s+ns, 8*s+ns)},
		judgedStep{2 * s, 50, 25, deny(50, 0, 9*s+ns, 10*s+ns, 8*s+ns)},
		judgedStep{2 * s, 0, 1, admit(100, 49, 10*s+ns, 8*s+ns)},  // 51 counted
		judgedStep{3 * s, 0, 29, admit(100, 20, 10*s+ns, 7*s+ns)}, // 80 counted
		judgedStep{4 * s, 50, 1, deny(50, 0, 7*s+ns, 9*s+ns, 7*s+ns)},
		judgedStep{10*s + ns, 50, 1, deny(50, 0, s, 3*s, s)},
		judgedStep{11*s + ns, 50, 1, admit(50, 9, 10*s+ns, s)},
	)
	runJudgedSteps(t, spec, steps)
}

// TestJudgedSlidingWindow: sliding_window, 100 per 10 s. 40 counted at 2 s
// in the current window; judged at 50, exactly 10 more pass at 3 s; the
// 11th waits until the next window weighs the 50 at 49: 0.2 s into it
// (50·9.8/10 = 49), 7.2 s. With 80 counted, a check judged at 50 at 5 s
// waits until 80·(10−e)/10 <= 49, e = 3.875 s into the next window:
// 8.875 s.
func TestJudgedSlidingWindow(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 100, Window: 10 * time.Second}
	s, ms := time.Second, time.Millisecond
	// At 3 s with 40+i counted, Remaining 10−i grows when the next window
	// weighs the 40+i at 39+i: after 7 s + (10 s − ⌊(39+i)·10 s/(40+i)⌋).
	next := func(i int64) time.Duration {
		return 17*s - time.Duration((39+i)*int64(10*s)/(40+i))
	}
	if next(1) != 7243902440*time.Nanosecond || next(10) != 7200*ms {
		t.Fatalf("next(1) = %s, next(10) = %s; want 7.24390244s (17 s − ⌊400/41 s⌋) and 7.2s", next(1), next(10))
	}
	steps := []judgedStep{{2 * s, 0, 40, admit(100, 60, 18*s, 8250*ms)}}
	steps = append(steps, tenAt(50, 3*s, 17*s, next)...)
	steps = append(steps,
		judgedStep{3 * s, 50, 1, deny(50, 0, 7200*ms, 17*s, 7200*ms)},
		// The Spec's limit: 51 counted, 49 left, 50 once the next window
		// weighs the 51 at 50: ⌊50·10/51 s⌋ = 9.803921568 s.
		judgedStep{3 * s, 0, 1, admit(100, 49, 17*s, 17*s-9803921568*time.Nanosecond)},
		judgedStep{4 * s, 0, 29, admit(100, 20, 16*s, 16*s-time.Duration(79*int64(10*s)/80))}, // 80 counted
		judgedStep{5 * s, 50, 1, deny(50, 0, 8875*ms, 15*s, 8875*ms)},
	)
	runJudgedSteps(t, spec, steps)
}

// TestJudgedSlidingBuckets: sliding_buckets, 100 per 10 s in 1 s buckets.
// 40 counted in the bucket of 2 s; judged at 50, exactly 10 more pass at
// 3 s; the 11th waits until the bucket of 2 s leaves the window, at 12 s:
// 9 s. With 80 counted (29 at 4 s), a check judged at 50 at 5 s waits
// for the same bucket, 7 s, and the key is back to full when the bucket
// of 4 s leaves, at 14 s: ResetAfter 9 s. At 12 s, 40 count: 9 more pass.
func TestJudgedSlidingBuckets(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 100, Window: 10 * time.Second, Buckets: 10}
	s := time.Second
	steps := []judgedStep{{2 * s, 0, 40, admit(100, 60, 10*s, 10*s)}}
	steps = append(steps, tenAt(50, 3*s, 10*s, constant(9*s))...)
	steps = append(steps,
		judgedStep{3 * s, 50, 1, deny(50, 0, 9*s, 10*s, 9*s)},
		judgedStep{3 * s, 0, 1, admit(100, 49, 10*s, 9*s)},  // 51 counted
		judgedStep{4 * s, 0, 29, admit(100, 20, 10*s, 8*s)}, // 80 counted
		judgedStep{5 * s, 50, 1, deny(50, 0, 7*s, 9*s, 7*s)},
		judgedStep{12 * s, 50, 9, admit(50, 1, 10*s, s)}, // the 40 of 2 s gone: 49 count, 50 when the 11 of 3 s leave
	)
	runJudgedSteps(t, spec, steps)
}

// windowKindsAt100 returns a Spec of each window kind, 100 per 10 s (in
// 1 s buckets).
func windowKindsAt100() []algorithms.Spec {
	var specs []algorithms.Spec
	for _, k := range algorithms.Kinds {
		if !k.Windowed() {
			continue
		}
		s := algorithms.Spec{Algorithm: k, Limit: 100, Window: 10 * time.Second}
		if k == algorithms.SlidingBuckets {
			s.Buckets = 10
		}
		specs = append(specs, s)
	}
	return specs
}

// TestJudgedRepeatedKeys: checks of one key under one Spec in one Take
// are each judged at their own limit, each following the earlier ones
// as if they had been admitted. fixed_window, 100 per 10 s, 40 counted:
// 5 at 100, then 5 at 50 (50 counted: passes), then 1 at 50 (51: denied,
// and the Take with it; the others report the state as loaded); 20 at
// 100 then 1 at 50 (61 past 50: Remaining 0, not negative); 5 at 50 then
// 5 at 100 pass, and the key has counted 50.
func TestJudgedRepeatedKeys(t *testing.T) {
	s := time.Second
	fixed := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: 10 * time.Second}
	log := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 100, Window: 10 * time.Second}
	eachJudgedPath(t, func(t *testing.T, clk *manualClock, take func(...algorithms.Check) []algorithms.Decision) {
		c := func(spec algorithms.Spec, limit, cost int64) algorithms.Check {
			return algorithms.Check{Spec: spec, Key: "k", Cost: cost, Limit: limit}
		}
		clk.t = judgedT0.Add(2 * s)
		take(c(fixed, 0, 40))
		clk.t = judgedT0.Add(3 * s)
		for _, tc := range []struct {
			checks []algorithms.Check
			want   []algorithms.Decision
		}{
			{[]algorithms.Check{c(fixed, 0, 5), c(fixed, 50, 5), c(fixed, 50, 1)},
				[]algorithms.Decision{admit(100, 60, 7*s, 7*s), admit(50, 10, 7*s, 7*s), deny(50, 0, 7*s, 7*s, 7*s)}},
			{[]algorithms.Check{c(fixed, 0, 20), c(fixed, 50, 1)},
				[]algorithms.Decision{admit(100, 60, 7*s, 7*s), deny(50, 0, 7*s, 7*s, 7*s)}},
			{[]algorithms.Check{c(fixed, 50, 5), c(fixed, 0, 5)},
				[]algorithms.Decision{admit(50, 5, 7*s, 7*s), admit(100, 50, 7*s, 7*s)}},
			{[]algorithms.Check{c(fixed, 50, 1)},
				[]algorithms.Decision{deny(50, 0, 7*s, 7*s, 7*s)}},
			{[]algorithms.Check{c(fixed, 0, 1), c(fixed, 100, 1)},
				[]algorithms.Decision{admit(100, 49, 7*s, 7*s), admit(100, 48, 7*s, 7*s)}},
		} {
			if got := take(tc.checks...); !slices.Equal(got, tc.want) {
				t.Fatalf("Take(%+v):\ngot  %+v\nwant %+v", tc.checks, got, tc.want)
			}
		}

		// sliding_log, 20 counted at 0 s and 20 at 1 s: at 2 s, 5 then 6
		// judged at 50: the second (51) is denied, waiting until the 20
		// of 0 s leave (8 s + 1 ns), and reports the 5 left after the
		// first; the first, not consumed, has 10 left.
		clk.t = judgedT0
		take(c(log, 0, 20))
		clk.t = judgedT0.Add(s)
		take(c(log, 0, 20))
		clk.t = judgedT0.Add(2 * s)
		ns := time.Nanosecond
		got := take(c(log, 50, 5), c(log, 50, 6))
		want := []algorithms.Decision{admit(50, 10, 9*s+ns, 8*s+ns), deny(50, 5, 8*s+ns, 10*s+ns, 8*s+ns)}
		if !slices.Equal(got, want) {
			t.Fatalf("sliding_log Take(5 at 50, 6 at 50):\ngot  %+v\nwant %+v", got, want)
		}
		got = take(c(log, 50, 5), c(log, 0, 5), c(log, 50, 1))
		if !got[0].Allowed || !got[1].Allowed || got[2].Allowed || got[2].Remaining != 0 {
			t.Fatalf("sliding_log Take(5 at 50, 5 at 100, 1 at 50) = %+v, want the third denied with Remaining 0", got)
		}
		got = take(c(log, 50, 5), c(log, 0, 5))
		if !got[0].Allowed || got[0].Remaining != 5 || !got[1].Allowed || got[1].Remaining != 50 {
			t.Fatalf("sliding_log Take(5 at 50, 5 at 100) = %+v, want both admitted, Remaining 5 and 50", got)
		}
	})
}

// TestJudgedPeek: Peek judges each check at its own limit on the Spec's
// state, as a Take alone would, and reports that limit.
func TestJudgedPeek(t *testing.T) {
	s, ns := time.Second, time.Nanosecond
	for _, client := range []struct {
		name string
		c    func(testing.TB) *redis.Client
	}{{"function", newClient}, {"script", noFunctionsClient}} {
		t.Run(client.name, func(t *testing.T) {
			clk := &manualClock{t: judgedT0.Add(2 * s)}
			st := clockedStore(t, client.c(t), clk)
			ctx := context.Background()
			fixed := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: 10 * time.Second}
			log := algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 100, Window: 10 * time.Second}
			if _, err := st.Take(ctx, algorithms.Check{Spec: fixed, Key: "k", Cost: 40}, algorithms.Check{Spec: log, Key: "k", Cost: 40}); err != nil {
				t.Fatal(err)
			}
			clk.t = judgedT0.Add(3 * s)
			checks := []algorithms.Check{
				{Spec: fixed, Key: "k", Cost: 10, Limit: 50},
				{Spec: fixed, Key: "k", Cost: 11, Limit: 50},
				{Spec: fixed, Key: "k", Cost: 1},
				{Spec: log, Key: "k", Cost: 10, Limit: 50},
				{Spec: log, Key: "k", Cost: 11, Limit: 50},
				{Spec: log, Key: "k", Cost: 1, Limit: 100},
			}
			want := []algorithms.Decision{
				admit(50, 10, 7*s, 7*s),
				deny(50, 10, 7*s, 7*s, 7*s),
				admit(100, 60, 7*s, 7*s),
				admit(50, 10, 9*s+ns, 9*s+ns),
				deny(50, 10, 9*s+ns, 9*s+ns, 9*s+ns),
				admit(100, 60, 9*s+ns, 9*s+ns),
			}
			dst := make([]algorithms.Decision, len(checks))
			if err := st.Peek(ctx, dst, checks); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(dst, want) {
				t.Fatalf("Peek:\ngot  %+v\nwant %+v", dst, want)
			}
			// 80 counted: judged at 50, Remaining 0 and the wait.
			if _, err := st.Take(ctx, algorithms.Check{Spec: fixed, Key: "k", Cost: 40}, algorithms.Check{Spec: log, Key: "k", Cost: 40}); err != nil {
				t.Fatal(err)
			}
			checks = checks[:1]
			checks = append(checks, algorithms.Check{Spec: log, Key: "k", Cost: 1, Limit: 50})
			want = []algorithms.Decision{deny(50, 0, 7*s, 7*s, 7*s), deny(50, 0, 9*s+ns, 10*s+ns, 9*s+ns)}
			dst = dst[:2]
			if err := st.Peek(ctx, dst, checks); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(dst, want) {
				t.Fatalf("Peek with 80 counted:\ngot  %+v\nwant %+v", dst, want)
			}
		})
	}
}

// TestJudgedGiveBack: a check judged at 50 given back returns its units
// to the Spec's state and reports, as a peek, at 50.
func TestJudgedGiveBack(t *testing.T) {
	s := time.Second
	for _, spec := range windowKindsAt100() {
		t.Run(string(spec.Algorithm), func(t *testing.T) {
			clk := &manualClock{t: judgedT0.Add(2 * s)}
			st := clockedStore(t, newClient(t), clk)
			ctx := context.Background()
			if _, err := st.Take(ctx, algorithms.Check{Spec: spec, Key: "k", Cost: 40}); err != nil {
				t.Fatal(err)
			}
			clk.t = judgedT0.Add(3 * s)
			judged := []algorithms.Check{{Spec: spec, Key: "k", Cost: 10, Limit: 50}}
			ds, err := st.Take(ctx, judged...)
			if err != nil || !ds[0].Allowed || ds[0].Limit != 50 || ds[0].Remaining != 0 {
				t.Fatalf("Take(10 at 50) with 40 counted = %+v, %v; want admitted, Limit 50, Remaining 0", ds, err)
			}
			dst := make([]algorithms.Refunded, 1)
			if err := st.GiveBack(ctx, dst, judged, ds, 0); err != nil {
				t.Fatal(err)
			}
			if g := dst[0]; !g.Given || !g.Allowed || g.Limit != 50 || g.Remaining != 10 {
				t.Fatalf("GiveBack of 10 at 50 = %+v, want given, admitted, Limit 50, Remaining 10", g)
			}
			d, err := st.Take(ctx, algorithms.Check{Spec: spec, Key: "k"})
			if err != nil || !d[0].Allowed || d[0].Remaining != 59 {
				t.Fatalf("Take(1 at 100) after the give-back = %+v, %v; want Remaining 59 (41 counted)", d, err)
			}
		})
	}
}

// TestJudgedKeysAndReset: a judged check's state lives under its Spec's
// keys (no key names its limit), and Reset of a judged check deletes the
// Spec's state.
func TestJudgedKeysAndReset(t *testing.T) {
	client := newClient(t)
	prefix := uniquePrefix(t)
	st, err := redisstore.New(client, redisstore.WithPrefix(prefix))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var want []string
	for _, spec := range windowKindsAt100() {
		c := algorithms.Check{Spec: spec, Key: "k", Cost: 30, Limit: 50}
		if d, err := st.Take(ctx, c); err != nil || !d[0].Allowed || d[0].Limit != 50 || d[0].Remaining != 20 {
			t.Fatalf("%s: Take(30 at 50) = %+v, %v; want admitted, Limit 50, Remaining 20", spec.Algorithm, d, err)
		}
		want = append(want, redisKeys(prefix, algorithms.Check{Spec: spec, Key: "k"})...)
	}
	got, err := client.Keys(ctx, prefix+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("keys after judged Takes: %q, want the Specs' %q", got, want)
	}
	for _, spec := range windowKindsAt100() {
		if err := st.Reset(ctx, algorithms.Check{Spec: spec, Key: "k", Limit: 50}); err != nil {
			t.Fatal(err)
		}
		d, err := st.Take(ctx, algorithms.Check{Spec: spec, Key: "k"})
		if err != nil || d[0].Remaining != 99 {
			t.Fatalf("%s: Take(1 at 100) after Reset of the judged check = %+v, %v; want Remaining 99", spec.Algorithm, d, err)
		}
	}
}

// TestJudgedInvalid: Check.Limit on a bucket kind, above Spec.Limit for
// sliding_log, above algorithms.MaxLimit for the other window kinds, or
// negative, and a cost above the judged limit (alone, or with the earlier
// checks of its key, one judged above the Spec's limit too), are refused with the errors algorithms.ValidateChecks
// returns, by Take, TakeInto, Peek and GiveBack, before any command is
// sent.
func TestJudgedInvalid(t *testing.T) {
	client, hook := countedClient(t)
	st := clockedStore(t, client, &manualClock{t: judgedT0})
	ctx := context.Background()
	fixed := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: 10 * time.Second}
	var checks [][]algorithms.Check
	for _, k := range algorithms.Kinds {
		if k.Windowed() {
			continue
		}
		s := algorithms.Spec{Algorithm: k, Limit: 100, Window: 10 * time.Second}
		if k == algorithms.LeakyQueue {
			s.MaxDelay = time.Second
		}
		checks = append(checks, []algorithms.Check{{Spec: s, Key: "k", Limit: 50}})
	}
	checks = append(checks,
		[]algorithms.Check{{Spec: algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 100, Window: 10 * time.Second}, Key: "k", Limit: 101}},
		[]algorithms.Check{{Spec: fixed, Key: "k", Limit: algorithms.MaxLimit + 1}},
		[]algorithms.Check{{Spec: fixed, Key: "k", Limit: 110, Cost: 111}},
		[]algorithms.Check{{Spec: fixed, Key: "k", Limit: 110, Cost: 60}, {Spec: fixed, Key: "k", Limit: 110, Cost: 51}},
		[]algorithms.Check{{Spec: fixed, Key: "k", Limit: -1}},
		[]algorithms.Check{{Spec: fixed, Key: "k", Limit: 50, Cost: 51}},
		[]algorithms.Check{{Spec: fixed, Key: "k", Limit: 50, Cost: 30}, {Spec: fixed, Key: "k", Limit: 50, Cost: 21}},
		[]algorithms.Check{{Spec: fixed, Key: "k", Cost: 30}, {Spec: fixed, Key: "k", Limit: 50, Cost: 21}},
		[]algorithms.Check{{Spec: fixed, Key: "other"}, {Spec: fixed, Key: "k", Limit: 20, Cost: 21}},
	)
	for _, cs := range checks {
		want := algorithms.ValidateChecks(cs)
		if want == nil {
			t.Fatalf("ValidateChecks(%+v) = nil, want an error", cs)
		}
		var se *algorithms.SpecError
		var ce *algorithms.CostError
		if !errors.As(want, &se) && !errors.As(want, &ce) {
			t.Fatalf("ValidateChecks(%+v) = %T %v, want a *SpecError or *CostError", cs, want, want)
		}
		if se != nil && se.Field != "Check.Limit" {
			t.Fatalf("ValidateChecks(%+v) = %v, want one naming Check.Limit", cs, want)
		}
		same := func(op string, err error) {
			t.Helper()
			if err == nil || err.Error() != want.Error() || errors.Is(err, algorithms.ErrInvalidSpec) != errors.Is(want, algorithms.ErrInvalidSpec) ||
				errors.Is(err, algorithms.ErrInvalidCost) != errors.Is(want, algorithms.ErrInvalidCost) {
				t.Errorf("%s(%+v) = %v, want %v", op, cs, err, want)
			}
		}
		_, err := st.Take(ctx, cs...)
		same("Take", err)
		same("TakeInto", st.TakeInto(ctx, make([]algorithms.Decision, len(cs)), cs))
		same("Peek", st.Peek(ctx, make([]algorithms.Decision, len(cs)), cs))
		ds := make([]algorithms.Decision, len(cs))
		for i := range ds {
			ds[i] = algorithms.Decision{Allowed: true, Limit: 1}
		}
		same("GiveBack", st.GiveBack(ctx, make([]algorithms.Refunded, len(cs)), cs, ds, 0))
	}
	if cmds, pipes := hook.snapshot(); len(cmds) != 0 || pipes != 0 {
		t.Fatalf("invalid judged checks sent %v and %d pipelines to Redis, want nothing", cmds, pipes)
	}
}

// TestJudgedClusterAllOrNothing: on a three-node Cluster, a Take whose
// judged checks span slots is all or nothing: denied by one judged check
// (45 of 100 counted, 6 more asked at 50), it consumes nothing on the
// other slots (40 counted there, 10 asked at 50, which fits); admitted,
// every check consumes, and is reported at its own limit.
func TestJudgedClusterAllOrNothing(t *testing.T) {
	client := sharedCluster(t)
	clk := &manualClock{t: judgedT0.Add(2 * time.Second)}
	st := clockedStore(t, client, clk)
	ctx := context.Background()
	specs := windowKindsAt100()
	keys := keysOnThreeSlots()
	// Each window kind on its own slot, 40 counted; sliding_log on a
	// fifth, 45 counted.
	var at50 []algorithms.Check
	for i, spec := range specs {
		c := algorithms.Check{Spec: spec, Key: keys[i], Cost: 40}
		if spec.Algorithm == algorithms.SlidingLog {
			c.Cost = 45
		}
		if d, err := st.Take(ctx, c); err != nil || !d[0].Allowed {
			t.Fatalf("Take(%+v) = %+v, %v", c, d, err)
		}
		c.Cost, c.Limit = 10, 50
		if spec.Algorithm == algorithms.SlidingLog {
			c.Cost = 6
		}
		at50 = append(at50, c)
	}
	clk.t = judgedT0.Add(3 * time.Second)
	for range 3 {
		d, err := st.Take(ctx, at50...)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range at50 {
			log := c.Spec.Algorithm == algorithms.SlidingLog
			if d[i].Allowed == log || d[i].Limit != 50 || d[i].Remaining != map[bool]int64{false: 10, true: 5}[log] {
				t.Fatalf("Take of judged checks across slots: check %d (%s) = %+v; want sliding_log denied, the others passing, at Limit 50 with nothing consumed", i, c.Spec.Algorithm, d[i])
			}
		}
	}
	for i := range at50 {
		if at50[i].Spec.Algorithm == algorithms.SlidingLog {
			at50[i].Cost = 5
		}
	}
	at50 = append(at50, algorithms.Check{Spec: specs[0], Key: keys[4]})
	d, err := st.Take(ctx, at50...)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range at50 {
		want := admit(50, 0, 0, 0)
		if i == len(at50)-1 {
			want = admit(100, 99, 0, 0)
		}
		if got := d[i]; !got.Allowed || got.Limit != want.Limit || got.Remaining != want.Remaining {
			t.Fatalf("admitted Take across slots: check %d (%s) = %+v, want Allowed, Limit %d, Remaining %d", i, c.Spec.Algorithm, got, want.Limit, want.Remaining)
		}
	}
	for i, c := range at50[:len(specs)] {
		d, err := st.Take(ctx, algorithms.Check{Spec: c.Spec, Key: c.Key, Limit: 50}, algorithms.Check{Spec: c.Spec, Key: c.Key})
		if err != nil || d[0].Allowed || d[0].Remaining != 0 {
			t.Fatalf("check %d (%s): Take(1 at 50, 1 at 100) after the admitted Take = %+v, %v; want the first denied, Remaining 0", i, c.Spec.Algorithm, d, err)
		}
		if d, err := st.Take(ctx, algorithms.Check{Spec: c.Spec, Key: c.Key}); err != nil || !d[0].Allowed || d[0].Remaining != 49 {
			t.Fatalf("check %d (%s): Take(1 at 100) = %+v, %v; want Remaining 49 (50 counted)", i, c.Spec.Algorithm, d, err)
		}
	}
}

// TestJudgedClusterUndo: a cross-slot Take whose judged check x (10 at 50
// on 40 of 100 counted) was reserved, then undone when another slot lost
// its race, gives x's 10 back: x reports its state as before, and a Take
// of 10 at 50 passes after.
func TestJudgedClusterUndo(t *testing.T) {
	for _, spec := range windowKindsAt100() {
		t.Run(string(spec.Algorithm), func(t *testing.T) {
			race := newLostRace(t)
			client := sharedCluster(t)
			client.AddHook(race.hook)
			st, err := redisstore.New(client, redisstore.WithClock(race.clk), redisstore.WithPrefix(race.prefix))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if d, err := race.other.Take(ctx, algorithms.Check{Spec: spec, Key: "user-1", Cost: 40}); err != nil || !d[0].Allowed {
				t.Fatalf("Take(40) = %+v, %v", d, err)
			}
			x := algorithms.Check{Spec: spec, Key: "user-1", Cost: 10, Limit: 50}
			d, err := st.Take(ctx, x, race.y)
			if err != nil {
				t.Fatal(err)
			}
			if !race.hook.hit.Load() {
				t.Fatal("the reservation of y never ran")
			}
			if !d[0].Allowed || d[1].Allowed || d[0].Limit != 50 || d[0].Remaining != 10 {
				t.Fatalf("Take(x, y) after losing the race = %+v, want x passing at Limit 50 with Remaining 10 (undone), y denied", d)
			}
			after, err := race.other.Take(ctx, x)
			if err != nil || !after[0].Allowed || after[0].Remaining != 0 {
				t.Fatalf("Take(x) after the undo = %+v, %v; want admitted with Remaining 0", after, err)
			}
		})
	}
}

// judgedOf returns checks with every window kind's check judged at limit.
func judgedOf(checks []algorithms.Check, limit int64) []algorithms.Check {
	out := slices.Clone(checks)
	for i := range out {
		if out[i].Spec.Algorithm.Windowed() {
			out[i].Limit = limit
		}
	}
	return out
}

// TestJudgedBigCounts: a state counted under a Spec of 10^9 per 10 s,
// judged at 1000, where the sliding_window's waits take their plain-number
// steps (1000·W < 2^52) on a previous window's count whose products with
// W pass 2^53. 999999999 counted in the previous window: at 3 s into the
// next, 1000 − ⌈999999999·7/10⌉ < 1, and one unit fits once
// 999999999·(W−e)/W <= 999, W − e <= ⌊999·10^10/999999999⌋ = 9990 ns:
// RetryAfter 7 s − 9990 ns. fixed_window, 999999999 counted: Remaining 0
// at 1000, 1 at the Spec's limit.
func TestJudgedBigCounts(t *testing.T) {
	s, ns := time.Second, time.Nanosecond
	big := int64(999_999_999)
	sliding := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 1_000_000_000, Window: 10 * time.Second}
	fixed := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1_000_000_000, Window: 10 * time.Second}
	eachJudgedPath(t, func(t *testing.T, clk *manualClock, take func(...algorithms.Check) []algorithms.Decision) {
		clk.t = judgedT0.Add(-5 * s)
		take(algorithms.Check{Spec: sliding, Key: "k", Cost: big}, algorithms.Check{Spec: fixed, Key: "k", Cost: big})
		clk.t = judgedT0.Add(-4 * s)
		for _, tc := range []struct {
			c    algorithms.Check
			want algorithms.Decision
		}{
			{algorithms.Check{Spec: fixed, Key: "k", Limit: 1000}, deny(1000, 0, 4*s, 4*s, 4*s)},
			{algorithms.Check{Spec: fixed, Key: "k", Limit: 1_000_000_000}, admit(1_000_000_000, 0, 4*s, 4*s)},
		} {
			if got := take(tc.c)[0]; got != tc.want {
				t.Fatalf("Take(%+v):\ngot  %+v\nwant %+v", tc.c, got, tc.want)
			}
		}
		clk.t = judgedT0.Add(3 * s)
		c := algorithms.Check{Spec: sliding, Key: "k", Limit: 1000}
		want := deny(1000, 0, 7*s-9990*ns, 7*s, 7*s-9990*ns)
		if got := take(c)[0]; got != want {
			t.Fatalf("Take(%+v):\ngot  %+v\nwant %+v", c, got, want)
		}
		// At the wait's end ⌈999999999·9990/10^10⌉ = 999 count: admitted,
		// Remaining 0; the next unit when 999999999·(W−e)/W <= 998, W − e
		// <= ⌊998·10^10/999999999⌋ = 9980 ns: NextAfter 10 ns.
		clk.t = judgedT0.Add(10*s - 9990*ns)
		want = admit(1000, 0, 10*s+9990*ns, 10*ns)
		if got := take(c)[0]; got != want {
			t.Fatalf("Take(%+v) at the wait's end:\ngot  %+v\nwant %+v", c, got, want)
		}
	})
}

// TestJudgedMatchesMemoryStore replays random traces of Takes whose
// window-kind checks are often judged at a limit below their Spec's (a
// random one, a small one, or the Spec's own), beside checks at their
// Spec's limit, on the memory store and on Redis with the same clock, and
// requires every Decision field to match: through the function library
// (fast and general paths), the script fallback, and the cluster's
// phases. The specs reach the bounds (Limit 10^9, Window 24 h), so counts
// taken at the Spec's limit pass a judged one by far.
func TestJudgedMatchesMemoryStore(t *testing.T) {
	clients := []func(*testing.T) redis.UniversalClient{
		func(t *testing.T) redis.UniversalClient { return newBoundClient(t) },
		func(t *testing.T) redis.UniversalClient { return noFunctionsBoundClient(t) },
		func(t *testing.T) redis.UniversalClient { return sharedBoundCluster(t) },
	}
	var windowed []algorithms.Kind
	for _, k := range algorithms.Kinds {
		if k.Windowed() {
			windowed = append(windowed, k)
		}
	}
	for seed := range seedCount(30, 6) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(seed), 2026))
			clk := &manualClock{t: time.Date(2026, 11, 30, 6, 0, 0, 123456789, time.UTC).Add(time.Duration(r.Int64N(int64(time.Hour))))}
			mem, rs := pairedStores(t, clients[seed%len(clients)](t), clk)
			var specs []algorithms.Spec
			for range 3 {
				k := windowed[r.IntN(len(windowed))]
				if r.IntN(2) == 0 {
					specs = append(specs, smallSpec(k))
				} else {
					specs = append(specs, randomSpec(r, k))
				}
			}
			specs = append(specs, randomSpec(r, algorithms.Kinds[r.IntN(len(algorithms.Kinds))]))
			keys := keysOnThreeSlots()[:3]
			var history []string
			for i := range 150 {
				step(r, clk, specs[r.IntN(len(specs))].Window)
				checks := make([]algorithms.Check, 1+r.IntN(3))
				for j := range checks {
					checks[j] = randomJudgedCheck(r, specs, keys)
				}
				takeAlike(t, mem, rs, clk, &history, i, algotest.FitRepeats(checks))
			}
		})
	}
}

// randomJudgedCheck returns a check of one of specs on one of keys, a
// window kind's judged at a random limit a time in four (at most 3 in
// another, at its Spec's own in a third, unjudged in the last), with a
// cost that fits the limit it is judged at.
func randomJudgedCheck(r *rand.Rand, specs []algorithms.Spec, keys []string) algorithms.Check {
	s := specs[r.IntN(len(specs))]
	c := algorithms.Check{Spec: s, Key: keys[r.IntN(len(keys))]}
	if s.Algorithm.Windowed() {
		switch r.IntN(4) {
		case 0:
			c.Limit = 1 + r.Int64N(s.Limit)
		case 1:
			c.Limit = 1 + r.Int64N(min(s.Limit, 3))
		case 2:
			c.Limit = s.Limit
		}
	}
	c.Cost = randomCost(r, c.Judged())
	return c
}
