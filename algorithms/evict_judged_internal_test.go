package algorithms

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestTableReckonsJudgedLimits replays random runs of checks judged at
// random limits (some at the Spec's own, 1000, which records nothing) on
// one table, at instants that never go back, from before 1970 to after,
// and after each asks at instants up to five windows on what capacity
// eviction reckons the table's keys at. It must be the lowest limit below
// 1000 judged in the period of two windows (aligned to the Unix epoch)
// holding the instant or the one before, else 1000; so never more than a
// limit judged less than two windows earlier (a key it held to is not idle
// yet) and never less than the lowest judged within four.
func TestTableReckonsJudgedLimits(t *testing.T) {
	const w = int64(time.Minute)
	spec := Spec{Algorithm: FixedWindow, Limit: 1000, Window: time.Minute}
	type check struct{ l, u int64 }
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 7))
		tb := &table{spec: spec, p: newParams(spec)}
		var hist []check
		u := int64(r.IntN(40)-20) * w
		for range 60 {
			switch r.IntN(4) {
			case 0:
				u += r.Int64N(3 * w)
			case 1:
				u += r.Int64N(w / 10)
			case 2:
				u += 2*w - 1 - floorMod(u, 2*w) // the last instant of a period
			}
			l := []int64{0, 1000, 10, 50, 200, 999, 1 + r.Int64N(999)}[r.IntN(7)]
			tb.judge(l, u)
			if l != 0 && l < 1000 {
				hist = append(hist, check{l, u})
			}
			for range 4 {
				at := u + r.Int64N(5*w)
				if r.IntN(4) == 0 {
					at = u + []int64{2*w - 1, 2 * w, 4*w - 1, 4 * w}[r.IntN(4)]
				}
				want, below2, below4 := int64(1000), int64(1000), int64(1000)
				k := floorDiv(at, 2*w)
				for _, c := range hist {
					if p := floorDiv(c.u, 2*w); p == k || p == k-1 {
						want = min(want, c.l)
					}
					if c.u > at-2*w {
						below2 = min(below2, c.l)
					}
					if c.u > at-4*w {
						below4 = min(below4, c.l)
					}
				}
				got := tb.reckoned(at)
				if got != want || got > below2 || got < below4 {
					t.Fatalf("seed %d: after %v, reckoned(%d) = %d, want %d (the lowest within two windows %d, within four %d)", seed, hist, at, got, want, below2, below4)
				}
			}
		}
	}
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }
