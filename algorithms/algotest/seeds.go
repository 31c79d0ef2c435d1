package algotest

import (
	"fmt"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// Base is the instant the seed examples call "0 s": a Unix time that is a
// multiple of one hour, so every window the examples use (5 s, 30 s,
// 1 min) starts there, as the seeds assume (windows are aligned to the
// Unix epoch).
var Base = time.Unix(1_800_000_000, 0)

// takeFunc decides one check at Base+at and fails the test on an error.
type takeFunc func(at time.Duration, c algorithms.Check) algorithms.Decision

// A seedExample is one worked example of the seed articles.
type seedExample struct {
	name string // the subtest name
	run  func(t *testing.T, take takeFunc)
}

// expect reports a failure, naming the example, when got != want.
func expect[T comparable](t *testing.T, where, field string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s: %s = %v, want %v", where, field, got, want)
	}
}

var (
	log30s     = algorithms.Spec{Algorithm: algorithms.SlidingLog, Limit: 5, Window: 30 * time.Second}
	counter30s = algorithms.Spec{Algorithm: algorithms.SlidingWindow, Limit: 5, Window: 30 * time.Second}
)

// fillPrevious makes 5 accepted requests of spec for key at the given
// instants, so that the window [0 s, 30 s) is full when the examples look at
// the window [30 s, 60 s).
func fillPrevious(t *testing.T, take takeFunc, where string, spec algorithms.Spec, key string, at ...time.Duration) {
	t.Helper()
	for i, a := range at {
		d := take(a, algorithms.Check{Spec: spec, Key: key})
		expect(t, fmt.Sprintf("%s: filling the previous window, request %d at %v", where, i+1, a), "Allowed", d.Allowed, true)
	}
}

// seedExamples are the acceptance examples of seeds 000 and 004, with the
// exact values that the semantics of package algorithms (see its Kind
// constants) derive from them.
var seedExamples = []seedExample{
	{"seed000_sliding_log_table", func(t *testing.T, take takeFunc) {
		// 30 s window, limit 5. The rows: time, arrivals, allowed.
		rows := []struct {
			at   time.Duration
			want []bool
		}{
			{0, []bool{true}},
			{5 * time.Second, []bool{true, true}},
			{15 * time.Second, []bool{true, true}},
			{25 * time.Second, []bool{false}},
			{35 * time.Second, []bool{true}}, // the window reaches back to 5 s and holds 4
			{40 * time.Second, []bool{true, true, false}},
		}
		var last algorithms.Decision
		for _, r := range rows {
			for i, want := range r.want {
				where := fmt.Sprintf("seed 000 sliding-log table (sliding_log 5/30s), %v row, request %d", r.at, i+1)
				last = take(r.at, algorithms.Check{Spec: log30s, Key: "lot"})
				expect(t, where, "Allowed", last.Allowed, want)
				expect(t, where, "Limit", last.Limit, 5)
			}
			if r.at == 25*time.Second {
				// The request at 0 s is still inside the window at 30 s (exactly W
				// old) and leaves 1 ns later.
				where := "seed 000 sliding-log table, 25 s row"
				expect(t, where, "Remaining", last.Remaining, 0)
				expect(t, where, "RetryAfter", last.RetryAfter, 5*time.Second+time.Nanosecond)
			}
			if r.at == 35*time.Second {
				expect(t, "seed 000 sliding-log table, 35 s row (window holds 4 + this one)", "Remaining", last.Remaining, 0)
			}
		}
		// The third request at 40 s: in the window are 15 s (2), 35 s (1) and
		// 40 s (2); the first to leave are those of 15 s, at 45 s + 1 ns.
		expect(t, "seed 000 sliding-log table, 40 s row, request 3", "RetryAfter", last.RetryAfter, 5*time.Second+time.Nanosecond)
	}},

	{"seed000_counter_table", func(t *testing.T, take takeFunc) {
		// sliding_window 5/30s, the previous window [0 s, 30 s) full with 5.
		fillPrevious(t, take, "seed 000 counter table", counter30s, "lot", 0, 0, 0, 0, 0)
		d := take(35*time.Second, algorithms.Check{Spec: counter30s, Key: "lot"})
		where := "seed 000 counter table, 35 s row (estimate 5/6·5 + 0 + 1 = 5.17 > 5)"
		expect(t, where, "Allowed", d.Allowed, false)
		expect(t, where, "Remaining", d.Remaining, 0)
		expect(t, where, "RetryAfter", d.RetryAfter, time.Second) // 4/5·5 + 1 = 5 at 36 s
		d = take(40*time.Second, algorithms.Check{Spec: counter30s, Key: "lot"})
		where = "seed 000 counter table, 40 s row (estimate 2/3·5 + 0 + 1 = 4.33 <= 5)"
		expect(t, where, "Allowed", d.Allowed, true)
		expect(t, where, "Remaining", d.Remaining, 0) // floor(5 − 4.33)
		d = take(40*time.Second, algorithms.Check{Spec: counter30s, Key: "lot"})
		where = "seed 000 counter table, second 40 s row (estimate 2/3·5 + 1 + 1 = 5.33 > 5)"
		expect(t, where, "Allowed", d.Allowed, false)
		expect(t, where, "RetryAfter", d.RetryAfter, 2*time.Second) // 3/5·5 + 1 + 1 = 5 at 42 s
	}},

	{"seed000_exercise1_33s_retry_after_3s", func(t *testing.T, take takeFunc) {
		fillPrevious(t, take, "seed 000 exercise 1", counter30s, "lot", 0, 0, 0, 0, 0)
		d := take(33*time.Second, algorithms.Check{Spec: counter30s, Key: "lot"})
		where := "seed 000 exercise 1, 33 s (0.9·5 + 0 + 1 = 5.5 > 5)"
		expect(t, where, "Allowed", d.Allowed, false)
		expect(t, where, "RetryAfter", d.RetryAfter, 3*time.Second)
	}},

	{"seed000_exercise2_first_accept_36s", func(t *testing.T, take takeFunc) {
		fillPrevious(t, take, "seed 000 exercise 2", counter30s, "lot", 0, 0, 0, 0, 0)
		d := take(36*time.Second-time.Nanosecond, algorithms.Check{Spec: counter30s, Key: "lot"})
		where := "seed 000 exercise 2, 36 s − 1 ns"
		expect(t, where, "Allowed", d.Allowed, false)
		expect(t, where, "RetryAfter", d.RetryAfter, time.Nanosecond)
		d = take(36*time.Second, algorithms.Check{Spec: counter30s, Key: "lot"})
		where = "seed 000 exercise 2, 36 s (0.8·5 + 0 + 1 = 5 <= 5)"
		expect(t, where, "Allowed", d.Allowed, true)
		expect(t, where, "Remaining", d.Remaining, 0)
	}},

	{"seed000_exercise3_early_requests_log_allows_counter_denies", func(t *testing.T, take takeFunc) {
		early := []time.Duration{0, 200 * time.Millisecond, 400 * time.Millisecond, 600 * time.Millisecond, 800 * time.Millisecond}
		fillPrevious(t, take, "seed 000 exercise 3 (sliding_log)", log30s, "lot", early...)
		fillPrevious(t, take, "seed 000 exercise 3 (sliding_window)", counter30s, "lot", early...)
		d := take(33*time.Second, algorithms.Check{Spec: log30s, Key: "lot"})
		where := "seed 000 exercise 3, sliding_log at 33 s (window back to 3 s is empty)"
		expect(t, where, "Allowed", d.Allowed, true)
		expect(t, where, "Remaining", d.Remaining, 4)
		d = take(33*time.Second, algorithms.Check{Spec: counter30s, Key: "lot"})
		where = "seed 000 exercise 3, sliding_window at 33 s (still counts 0.9·5)"
		expect(t, where, "Allowed", d.Allowed, false)
		expect(t, where, "RetryAfter", d.RetryAfter, 3*time.Second)
	}},

	{"seed000_boundary_burst_100_per_minute", func(t *testing.T, take takeFunc) {
		// 100 requests at 59 s and 100 at 61 s, 100 per minute.
		for _, c := range []struct {
			kind algorithms.Kind
			want int
		}{
			{algorithms.FixedWindow, 200},
			{algorithms.SlidingLog, 100},
			{algorithms.SlidingWindow, 101},
		} {
			spec := algorithms.Spec{Algorithm: c.kind, Limit: 100, Window: time.Minute}
			admitted := 0
			for _, at := range []time.Duration{59 * time.Second, 61 * time.Second} {
				for range 100 {
					if take(at, algorithms.Check{Spec: spec, Key: "burst"}).Allowed {
						admitted++
					}
				}
			}
			expect(t, fmt.Sprintf("seed 000 boundary burst, %s", c.kind), "admitted", admitted, c.want)
		}
	}},

	{"seed004_buckets_reject_at_6s_fixed_admits_ten", func(t *testing.T, take takeFunc) {
		buckets := algorithms.Spec{Algorithm: algorithms.SlidingBuckets, Limit: 5, Window: 5 * time.Second, Buckets: 5}
		fixed := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: 5 * time.Second}
		for _, spec := range []algorithms.Spec{buckets, fixed} {
			admitted := 0
			var last algorithms.Decision
			for _, at := range []time.Duration{4 * time.Second, 6 * time.Second} {
				for i := range 5 {
					last = take(at, algorithms.Check{Spec: spec, Key: "seed004"})
					if last.Allowed {
						admitted++
					} else if at == 4*time.Second {
						t.Errorf("seed 004, %s: request %d at 4 s denied, want all five at 4 s admitted", spec.Algorithm, i+1)
					}
				}
			}
			if spec == buckets {
				expect(t, "seed 004, sliding_buckets 5/5s in 1 s buckets", "admitted", admitted, 5)
				// The 4 s bucket leaves the window when the 9 s bucket starts.
				expect(t, "seed 004, sliding_buckets, last request at 6 s", "RetryAfter", last.RetryAfter, 3*time.Second)
			} else {
				expect(t, "seed 004, fixed_window 5/5s", "admitted", admitted, 10)
			}
		}
	}},

	{"seed004_fixed_window_sixth_at_1s_rejected", func(t *testing.T, take takeFunc) {
		fixed := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: 5 * time.Second}
		for i := range 6 {
			d := take(time.Second, algorithms.Check{Spec: fixed, Key: "seed004"})
			where := fmt.Sprintf("seed 004, fixed_window 5/5s, request %d at 1 s", i+1)
			expect(t, where, "Allowed", d.Allowed, i < 5)
			expect(t, where, "Remaining", d.Remaining, int64(max(0, 4-i)))
			if i == 5 {
				expect(t, where, "RetryAfter", d.RetryAfter, 4*time.Second)
				expect(t, where, "ResetAfter", d.ResetAfter, 4*time.Second)
			}
		}
		d := take(5*time.Second-time.Nanosecond, algorithms.Check{Spec: fixed, Key: "seed004"})
		expect(t, "seed 004, fixed_window, 5 s − 1 ns (same window)", "Allowed", d.Allowed, false)
		d = take(5*time.Second, algorithms.Check{Spec: fixed, Key: "seed004"})
		expect(t, "seed 004, fixed_window, 5 s (second window)", "Allowed", d.Allowed, true)
		expect(t, "seed 004, fixed_window, 5 s (second window)", "Remaining", d.Remaining, 4)
	}},
}
