package redisstore

import (
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// The bound on what a key admitted, which TestUndoBound (this package) and
// TestClusterConcurrentCrossSlotTakes (redisstore_test) check: pure test
// helpers, exported to the external test package from this test file (they
// are compiled into the package only under go test).

// AdmittedTake is an admitted Take's check of one key.
type AdmittedTake struct {
	T    int64 // the instant the Take was made at (its clock's)
	TE   int64 // the instant the key decided it at (a clock behind: later)
	Cost int64
}

// WindowKind reports whether k decides an earlier instant at the latest
// one its state knows of (algorithms, "Time that goes back").
func WindowKind(k algorithms.Kind) bool {
	switch k {
	case algorithms.FixedWindow, algorithms.SlidingLog, algorithms.SlidingWindow, algorithms.SlidingBuckets:
		return true
	}
	return false
}

// EffectiveInstant returns the instant an admitted Take of spec made at t
// was decided at, from its Decision: for the window kinds the key's latest
// instant when later than t (algorithms, "Time that goes back"), else t.
func EffectiveInstant(sp algorithms.Spec, t int64, d algorithms.Decision) (int64, error) {
	w := int64(sp.Window)
	end := t + int64(d.ResetAfter)
	// start returns the start of the period of length size that ends
	// `ends` periods after it at end, or an error.
	start := func(size, ends int64) (int64, error) {
		if end%size != 0 {
			return 0, fmt.Errorf("ResetAfter ends at %d, not at a boundary of %v", end, time.Duration(size))
		}
		return max(t, end-ends*size), nil
	}
	switch sp.Algorithm {
	case algorithms.FixedWindow:
		return start(w, 1)
	case algorithms.SlidingWindow:
		return start(w, 2)
	case algorithms.SlidingBuckets:
		return start(w/int64(sp.Buckets), int64(sp.Buckets))
	case algorithms.SlidingLog:
		return end - w - 1, nil
	}
	return t, nil
}

// AdmittedBound returns how the admitted Takes as of one key exceed what
// sp allows, or "": for the window kinds, decided at TE, the units in any
// fixed window, in any closed interval of length W (sliding_log), in any
// B consecutive sub-windows (sliding_buckets) are at most L, and a
// sliding_window's previous count P and the units of its window k decided
// at offsets up to x (S_x) satisfy P·(W−x) + S_x·W <= L·W; for
// token_bucket and leaky_bucket, made at T, the units at instants in
// [a, b] are at most the capacity plus (b−a)·L/W; for leaky_queue at most
// (b−a+MaxDelay)·L/W plus the largest cost.
func AdmittedBound(sp algorithms.Spec, as []AdmittedTake) string {
	w, lim := int64(sp.Window), sp.Limit
	floorDiv := func(a, b int64) int64 {
		q := a / b
		if a%b != 0 && (a < 0) != (b < 0) {
			q--
		}
		return q
	}
	sumWhere := func(in func(a AdmittedTake) bool) (s int64) {
		for _, a := range as {
			if in(a) {
				s += a.Cost
			}
		}
		return s
	}
	switch sp.Algorithm {
	case algorithms.FixedWindow:
		for _, x := range as {
			k := floorDiv(x.TE, w)
			if s := sumWhere(func(a AdmittedTake) bool { return floorDiv(a.TE, w) == k }); s > lim {
				return fmt.Sprintf("%d units in window %d", s, k)
			}
		}
	case algorithms.SlidingLog:
		for _, x := range as {
			if s := sumWhere(func(a AdmittedTake) bool { return a.TE >= x.TE && a.TE <= x.TE+w }); s > lim {
				return fmt.Sprintf("%d units decided in [%d, %d]", s, x.TE, x.TE+w)
			}
		}
	case algorithms.SlidingBuckets:
		size, b := w/int64(sp.Buckets), int64(sp.Buckets)
		for _, x := range as {
			j := floorDiv(x.TE, size)
			if s := sumWhere(func(a AdmittedTake) bool { j2 := floorDiv(a.TE, size); return j2 >= j && j2 < j+b }); s > lim {
				return fmt.Sprintf("%d units in sub-windows %d to %d", s, j, j+b-1)
			}
		}
	case algorithms.SlidingWindow:
		for _, x := range as {
			k := floorDiv(x.TE, w)
			off := x.TE - k*w
			p := sumWhere(func(a AdmittedTake) bool { return floorDiv(a.TE, w) == k-1 })
			sx := sumWhere(func(a AdmittedTake) bool { return floorDiv(a.TE, w) == k && a.TE-k*w <= off })
			// P·(W−x) + S_x·W <= L·W, exactly.
			lhs := new(big.Int).Add(new(big.Int).Mul(big.NewInt(p), big.NewInt(w-off)), new(big.Int).Mul(big.NewInt(sx), big.NewInt(w)))
			if lhs.Cmp(new(big.Int).Mul(big.NewInt(lim), big.NewInt(w))) > 0 {
				return fmt.Sprintf("window %d: %d units before, %d decided by offset %v", k, p, sx, time.Duration(off))
			}
		}
	default:
		capa, extra, most := sp.Burst, int64(0), int64(0)
		if sp.Algorithm == algorithms.LeakyQueue {
			capa, extra = 0, int64(sp.MaxDelay)
			for _, a := range as {
				most = max(most, a.Cost)
			}
		}
		// The units at each instant, in order of instant, and their sums.
		at := map[int64]int64{}
		for _, a := range as {
			at[a.T] += a.Cost
		}
		ts := make([]int64, 0, len(at))
		for x := range at {
			ts = append(ts, x)
		}
		slices.Sort(ts)
		for i, x := range ts {
			var s int64
			for _, y := range ts[i:] {
				s += at[y]
				// s·W <= (capa + most)·W + (y−x+extra)·L, exactly.
				lhs := new(big.Int).Mul(big.NewInt(s), big.NewInt(w))
				rhs := new(big.Int).Add(new(big.Int).Mul(big.NewInt(capa+most), big.NewInt(w)), new(big.Int).Mul(big.NewInt(y-x+extra), big.NewInt(lim)))
				if lhs.Cmp(rhs) > 0 {
					return fmt.Sprintf("%d units at instants in [%d, %d]", s, x, y)
				}
			}
		}
	}
	return ""
}
