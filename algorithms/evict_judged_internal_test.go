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
			l := []int64{0, 1000, 10, 50, 200, 999, 1 + r.Int64N(999), 1001, MaxLimit}[r.IntN(9)] // above 1000: raised, recording nothing
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

// TestUsedCellCountsPastTheLimit: eviction reckons a window kind's key at
// everything its state counts, which checks judged at a limit above the
// Spec's may take past the Spec's capacity: a share above 1, so that such
// a key goes after every key checked at its Spec's own limit. 15 units
// judged at 20 on a Spec of 10 a minute count 15 in their window; for
// sliding_window, a fifth into the next window they weigh
// ceil(15·4/5) = 12, and a fifth into the one after nothing (idle).
func TestUsedCellCountsPastTheLimit(t *testing.T) {
	const w = int64(time.Minute)
	for _, k := range []Kind{FixedWindow, SlidingWindow} {
		p := newParams(Spec{Algorithm: k, Limit: 10, Window: time.Minute})
		jp := p.judged(20)
		t0 := 7 * w
		c := p.freshCell(t0)
		var d Decision
		jp.decideCell(&c, t0+w/10, 15, true, &d)
		if !d.Allowed || d.Remaining != 5 {
			t.Fatalf("%s: 15 judged at 20 = %+v, want admitted with 5 left", k, d)
		}
		want := map[int64]int64{t0 + w/2: 15, t0 + w + w/5: 0, t0 + 2*w + w/5: 0}
		if k == SlidingWindow {
			want[t0+w+w/5] = 12
		}
		for at, u := range want {
			if got := p.usedCell(c, at); got != u {
				t.Errorf("%s: 15 counted at +%v: used at +%v = %d, want %d", k, time.Duration(w/10), time.Duration(at-t0), got, u)
			}
		}
	}
}
