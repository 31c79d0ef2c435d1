package redisstore_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/redis/go-redis/v9"
)

// Checks judged at a limit above their Spec's (algorithms.Check.Limit >
// Spec.Limit: a limit raised by a reload within the window, judged on
// the state the replaced Spec kept). The figures are worked out by hand
// from the kinds' rules in DESIGN.md, on judgedT0's clock (judged_test.go).

// TestRaisedFixedWindow: fixed_window, 100 per 10 s. 100 counted at 2 s;
// judged at 110, exactly 10 more pass at 3 s (the window ends in 7 s),
// then the 11th is denied until the window's end; the state now counts
// 110, past its Spec's 100: at the Spec's limit, and at 105, Remaining 0
// and a wait for the window's end; in the next window a check judged at
// 110 may take all 110 at once, and the Spec's limit then has none.
func TestRaisedFixedWindow(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: 10 * time.Second}
	s := time.Second
	steps := []judgedStep{{2 * s, 0, 100, admit(100, 0, 8*s, 8*s)}}
	steps = append(steps, tenAt(110, 3*s, 7*s, constant(7*s))...)
	steps = append(steps,
		judgedStep{3 * s, 110, 1, deny(110, 0, 7*s, 7*s, 7*s)},
		judgedStep{3 * s, 0, 1, deny(100, 0, 7*s, 7*s, 7*s)},
		judgedStep{4 * s, 105, 1, deny(105, 0, 6*s, 6*s, 6*s)},
		judgedStep{4 * s, 111, 1, admit(111, 0, 6*s, 6*s)}, // 111 counted
		judgedStep{4 * s, 1_000_000_000, 999_999_889, admit(1_000_000_000, 0, 6*s, 6*s)},
		judgedStep{5 * s, 1_000_000_000, 1, deny(1_000_000_000, 0, 5*s, 5*s, 5*s)},
		judgedStep{10 * s, 110, 110, admit(110, 0, 10*s, 10*s)},
		judgedStep{11 * s, 0, 1, deny(100, 0, 9*s, 9*s, 9*s)},
	)
	runJudgedSteps(t, spec, steps)
}

// TestRaisedSlidingWindow: sliding_window, 100 per 10 s. 100 counted at
// 2 s in the current window; judged at 110, exactly 10 more pass at 3 s,
// the i-th leaving 100+i counted, whose Remaining grows when the next
// window weighs them at 99+i: after 7 s + (10 s − ⌊(99+i)·10 s/(100+i)⌋).
// The 11th waits for as long as the 10th's NextAfter (110 weighed at 109:
// 10/110 s into the next window, 7.090909091 s); at the Spec's 100 the
// 110 must weigh 99: 1 s into it, 8 s.
func TestRaisedSlidingWindow(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 100, Window: 10 * time.Second}
	s, ns := time.Second, time.Nanosecond
	next := func(i int64) time.Duration {
		return 17*s - time.Duration((99+i)*int64(10*s)/(100+i))
	}
	if next(10) != 7090909091*ns {
		t.Fatalf("next(10) = %s, want 7.090909091s (17 s − ⌊1090/110 s⌋)", next(10))
	}
	// 100 counted at 2 s: one more once the next window weighs them at
	// 99, 0.1 s into it.
	steps := []judgedStep{{2 * s, 0, 100, admit(100, 0, 18*s, 8100*time.Millisecond)}}
	steps = append(steps, tenAt(110, 3*s, 17*s, next)...)
	steps = append(steps,
		judgedStep{3 * s, 110, 1, deny(110, 0, 7090909091*ns, 17*s, 7090909091*ns)},
		judgedStep{3 * s, 0, 1, deny(100, 0, 8*s, 17*s, 8*s)},
		// 1 s into the next window the 110 weigh 99: 11 pass at 110,
		// and one more when they weigh 98, 1/110 s later (⌈10 s/110⌉).
		// At the Spec's 100, 11 + 99 is past it: wait until the 110
		// weigh 88, 2 s into the window.
		judgedStep{11 * s, 110, 11, admit(110, 0, 19*s, 90909091*ns)},
		judgedStep{11 * s, 0, 1, deny(100, 0, s, 19*s, s)},
	)
	runJudgedSteps(t, spec, steps)
}

// TestRaisedSlidingBuckets: sliding_buckets, 100 per 10 s in 1 s buckets.
// 100 counted in the bucket of 2 s; judged at 110, exactly 10 more pass
// at 3 s, each NextAfter 9 s (the bucket of 2 s leaves at 12 s); the
// 11th waits as long, and so does one at the Spec's limit (110 counted:
// Remaining 0). At 12 s, the 10 of 3 s count: one judged at 110 takes
// 100, and Remaining grows again when the bucket of 3 s leaves, 1 s on;
// at the Spec's limit one waits until the bucket of 12 s leaves.
func TestRaisedSlidingBuckets(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 100, Window: 10 * time.Second, Buckets: 10}
	s := time.Second
	steps := []judgedStep{{2 * s, 0, 100, admit(100, 0, 10*s, 10*s)}}
	steps = append(steps, tenAt(110, 3*s, 10*s, constant(9*s))...)
	steps = append(steps,
		judgedStep{3 * s, 110, 1, deny(110, 0, 9*s, 10*s, 9*s)},
		judgedStep{3 * s, 0, 1, deny(100, 0, 9*s, 10*s, 9*s)},
		judgedStep{12 * s, 110, 100, admit(110, 0, 10*s, s)},
		judgedStep{12 * s, 0, 1, deny(100, 0, 10*s, 10*s, 10*s)}, // the 100 of 12 s alone are past 100 with one more
	)
	runJudgedSteps(t, spec, steps)
}

// TestRaisedRepeatedKeys: checks of one key under one Spec in one Take,
// some judged above the Spec's limit, each judged at its own limit and
// following the earlier ones as if admitted. fixed_window, 100 per 10 s,
// 100 counted: 5 at 110 then 1 at the Spec's 100 (106 counted past 100:
// denied, the first reported on the state as loaded); 5 at 110 then 5 at
// 110 pass; then nothing more at 110.
func TestRaisedRepeatedKeys(t *testing.T) {
	s := time.Second
	for _, spec := range []algorithms.Spec{
		{Algorithm: algorithms.FixedWindow, Limit: 100, Window: 10 * time.Second},
		{Algorithm: algorithms.SlidingBuckets, Limit: 100, Window: 10 * time.Second, Buckets: 1},
	} {
		t.Run(string(spec.Algorithm), func(t *testing.T) {
			// Each kind waits, and is back to full, at the window's
			// end, 7 s after 3 s.
			eachJudgedPath(t, func(t *testing.T, clk *manualClock, take func(...algorithms.Check) []algorithms.Decision) {
				c := func(limit, cost int64) algorithms.Check {
					return algorithms.Check{Spec: spec, Key: "k", Cost: cost, Limit: limit}
				}
				clk.t = judgedT0
				take(c(0, 100))
				clk.t = judgedT0.Add(3 * s)
				reset := 7 * s
				for _, tc := range []struct {
					checks []algorithms.Check
					want   []algorithms.Decision
				}{
					{[]algorithms.Check{c(110, 5), c(0, 1)},
						[]algorithms.Decision{admit(110, 10, reset, reset), deny(100, 0, reset, reset, reset)}},
					{[]algorithms.Check{c(110, 5), c(110, 5)},
						[]algorithms.Decision{admit(110, 5, reset, reset), admit(110, 0, reset, reset)}},
					{[]algorithms.Check{c(110, 1)},
						[]algorithms.Decision{deny(110, 0, reset, reset, reset)}},
				} {
					if got := take(tc.checks...); !slices.Equal(got, tc.want) {
						t.Fatalf("Take(%+v):\ngot  %+v\nwant %+v", tc.checks, got, tc.want)
					}
				}
			})
		})
	}
}

// TestRaisedTracesMatchMemoryStore replays random traces of Takes, Peeks
// and GiveBacks (judgedTraces) whose fixed_window, sliding_window and
// sliding_buckets checks are judged mostly above their Spec's limit: at
// the limit the trace last "reloaded" the Spec to (raisedPicker), at
// another raised one, lowered, or at the Spec's own, and sliding_log
// checks below or at theirs; so counts pass the Spec's limit and are then
// judged at every limit. Every Decision and Refunded must match the
// memory store's: through the function library (fast and general
// paths), the script fallback and the cluster's phases, and with the deny
// cache on even seeds.
func TestRaisedTracesMatchMemoryStore(t *testing.T) {
	kinds := []algorithms.Kind{algorithms.FixedWindow, algorithms.SlidingWindow, algorithms.SlidingBuckets,
		algorithms.FixedWindow, algorithms.SlidingWindow, algorithms.SlidingBuckets, algorithms.SlidingLog}
	judgedTraces(t, seedCount(40, 6), 110, kinds, raisedPicker)
}

// raisedPicker returns a trace's picker of checks judged above their
// Spec's limit: each raisable Spec has a limit it was last raised to
// (drawn again one time in twenty, a reload), which half of its checks
// are judged at; the others are judged at another raised limit, a lower
// one, or the Spec's. A sliding_log check is judged at a limit at most
// its Spec's half the time.
func raisedPicker() tracePicker {
	raised := map[algorithms.Spec]int64{}
	return func(r *rand.Rand, specs []algorithms.Spec, keys []string) algorithms.Check {
		s := specs[r.IntN(len(specs))]
		c := algorithms.Check{Spec: s, Key: keys[r.IntN(len(keys))]}
		switch {
		case s.Algorithm.Raisable():
			if _, ok := raised[s]; !ok || r.IntN(20) == 0 {
				raised[s] = raiseOf(r, s)
			}
			switch r.IntN(6) {
			case 0, 1, 2:
				c.Limit = raised[s]
			case 3:
				c.Limit = raiseOf(r, s)
			case 4:
				c.Limit = 1 + r.Int64N(s.Limit)
			}
		case s.Algorithm.Windowed():
			if r.IntN(2) == 0 {
				c.Limit = 1 + r.Int64N(s.Limit)
			}
		}
		c.Cost = randomCost(r, c.Judged())
		if r.IntN(2) == 0 {
			c.Cost = 1 + r.Int64N(min(c.Judged().Capacity(), 3)) // small costs, so that counts climb past the Spec's limit
		}
		return c
	}
}

// raiseOf returns a limit above s's (at most algorithms.MaxLimit, which
// s's may be already): just above, up to twice it, near MaxLimit, or any.
func raiseOf(r *rand.Rand, s algorithms.Spec) int64 {
	var l int64
	switch r.IntN(4) {
	case 0:
		l = s.Limit + 1 + r.Int64N(3)
	case 1:
		l = s.Limit + 1 + r.Int64N(s.Limit)
	case 2:
		l = algorithms.MaxLimit - r.Int64N(3)
	default:
		l = s.Limit + 1 + r.Int64N(algorithms.MaxLimit-s.Limit+1)
	}
	return min(l, algorithms.MaxLimit)
}

// TestRaisedBigCountsMatchMemoryStore: on one key of each raisable kind
// with a small Spec limit (1, or 1000) and the longest windows, checks
// judged near algorithms.MaxLimit take counts of up to 6·10^8 at once, so
// that the state counts up to 10^9, a million times its Spec's limit, and
// checks at the Spec's limit, just above it, and at random limits are
// judged on it, alone (fast.lua for fixed_window and sliding_window) and
// beside judgedPad (main.lua), through the function library and the
// script fallback: every Decision field must match the memory store's
// (doc.go, "Exactness": counts up to MaxLimit whatever the Spec's limit).
func TestRaisedBigCountsMatchMemoryStore(t *testing.T) {
	r := rand.New(rand.NewPCG(110, 7))
	for ci, mk := range []func(testing.TB) *redis.Client{newClient, noFunctionsClient} {
		for _, w := range []time.Duration{24 * time.Hour, 86399999999, 1000003, 10 * time.Second} {
			for _, kind := range []algorithms.Kind{algorithms.SlidingWindow, algorithms.FixedWindow, algorithms.SlidingBuckets} {
				for _, limit := range []int64{1, 1000} {
					spec := bigCountSpec(kind, limit, w)
					t.Run(fmt.Sprint(ci, kind, w, limit), func(t *testing.T) {
						bigCountSteps(t, mk, spec, r, func(c algorithms.Check) algorithms.Check {
							switch r.IntN(5) {
							case 0:
								c.Limit = algorithms.MaxLimit - r.Int64N(3)
								c.Cost = 1 + r.Int64N(600_000_000)
							case 1:
								c.Cost = 1 + r.Int64N(limit)
							case 2:
								c.Limit = limit + 1 + r.Int64N(3)
							default:
								c.Limit = 1 + r.Int64N(algorithms.MaxLimit)
								c.Cost = 1 + r.Int64N(min(c.Limit, 5))
							}
							return c
						})
					})
				}
			}
		}
	}
}

// TestRaisedRoundedProduct: the weighted count of sliding_window's fast
// path, ceil(prev·(W−e)/W), on a product past 2^53, where a double is no
// longer an integer's exact value. A Spec of 5 per 10 s judged at
// MaxLimit counts prev = 1000001 in one window; 999999 ns into the next,
// prev·(W−e) = 9999010000000001 = 999901·W + 1, which a double rounds to
// 999901·W: counted plain, the previous window weighs 999901 where it
// weighs 999902, one unit too few. The random traces never meet such a
// product (its remainder by W must be within 2 of 0), and widening the
// plain range of fast.lua's product to 2^54 broke none of them.
func TestRaisedRoundedProduct(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 5, Window: 10 * time.Second}
	for ci, mk := range []func(testing.TB) *redis.Client{newClient, noFunctionsClient} {
		for _, pad := range []bool{false, true} {
			t.Run(fmt.Sprint(ci, pad), func(t *testing.T) {
				clk := &manualClock{t: time.Date(2026, 11, 30, 6, 0, 0, 0, time.UTC)}
				mem, rs := pairedStores(t, mk(t), clk)
				var history []string
				steps := []struct {
					after time.Duration
					c     algorithms.Check
				}{
					{0, algorithms.Check{Spec: spec, Key: "k", Limit: algorithms.MaxLimit, Cost: 1000001}},
					{10*time.Second + 999999, algorithms.Check{Spec: spec, Key: "k", Limit: algorithms.MaxLimit}},
					{0, algorithms.Check{Spec: spec, Key: "k", Limit: 999902}},
					{0, algorithms.Check{Spec: spec, Key: "k", Limit: 999903}},
				}
				for i, st := range steps {
					clk.t = clk.t.Add(st.after)
					checks := []algorithms.Check{st.c}
					if pad {
						checks = append(checks, judgedPad)
					}
					takeAlike(t, mem, rs, clk, &history, i, checks)
				}
			})
		}
	}
}
