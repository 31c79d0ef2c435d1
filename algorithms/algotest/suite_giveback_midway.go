package algotest

import (
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// giveBackMidway checks the window kinds' rule for a give-back whose
// reckoning E = now + ResetAfter − waited lands halfway between the
// Take's window (or bucket) and the next, where a later request is
// counted: the nearer one is the Take's, a tie going to the later
// ([algorithms.GiveBacker.GiveBack]). 5 per 10 s (sliding_buckets in 2 s
// sub-windows): A at +9 s, B at +11 s (in the next window, and in the
// next bucket, +10 s to +12 s), A given back at +14.5 s by a caller whose
// waited is short (the Take's true wait is 5.5 s), so that E is the
// midway instant, 1 ns before it, or 1 ns after. Before it, A's window (bucket) is the one: fixed_window's has
// ended (nothing back, B still counted), sliding_window's previous
// counter and A's bucket lose A's unit; at it and after it, B's window
// (bucket) is: B's unit comes back. Each give-back is also compared with
// the Model.
func giveBackMidway(t *testing.T, h Harness) {
	const s = time.Second
	ms := time.Millisecond
	type want struct {
		given     bool
		remaining int64
		reset     time.Duration
	}
	for _, c := range []struct {
		spec  algorithms.Spec
		tie   time.Duration // the waited that puts E midway
		early want          // E 1 ns before midway: A's window or bucket
		late  want          // E midway or 1 ns after: B's
	}{
		// A's window ends at +10 s (ResetAfter 1 s), B's at +20 s: E = 15 s
		// midway.
		{giveBackSpecs()[0], 500 * ms, want{false, 4, 5500 * ms}, want{true, 5, 0}},
		// E − 2W is the start of the Take's window: A's 0 s (ResetAfter
		// 11 s), B's 10 s, E = 25 s midway. Either counter loses a unit:
		// ResetAfter tells which is left (B's current one: 2W − 4.5 s;
		// A's previous one: W − 4.5 s).
		{giveBackSpecs()[1], 500 * ms, want{true, 4, 15500 * ms}, want{true, 4, 5500 * ms}},
		// E/S − Buckets is the Take's bucket: A's 4 (+8 s to +10 s,
		// ResetAfter 9 s), B's 5, E = 19 s midway. ResetAfter tells which
		// is left: B's clears the window at +20 s, A's at +18 s.
		{giveBackSpecs()[3], 4500 * ms, want{true, 4, 5500 * ms}, want{true, 4, 3500 * ms}},
	} {
		for _, off := range []struct {
			name   string
			waited time.Duration
			want   want
		}{
			{"before", c.tie + time.Nanosecond, c.early},
			{"tie", c.tie, c.late},
			{"after", c.tie - time.Nanosecond, c.late},
		} {
			t.Run(string(c.spec.Algorithm)+"/"+off.name, func(t *testing.T) {
				e := newEnv(t, h)
				gb := e.store.(algorithms.GiveBacker)
				chk := []algorithms.Check{{Spec: c.spec, Key: "k"}}
				a := e.take(9*s, chk...)
				e.take(11*s, chk...)
				got := giveBackBoth(t, e.clock, gb, e.model, 14500*ms, off.waited, chk, a)[0]
				if got.Given != off.want.given || got.Remaining != off.want.remaining || got.ResetAfter != off.want.reset {
					t.Errorf("A given back at +14.5s, waited %v (E %s midway): Given %v, Remaining %d, ResetAfter %v (%+v); want Given %v, Remaining %d, ResetAfter %v",
						off.waited, off.name, got.Given, got.Remaining, got.ResetAfter, got, off.want.given, off.want.remaining, off.want.reset)
				}
			})
		}
	}
}
