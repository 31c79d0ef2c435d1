package algorithms

import "math/bits"

// Exact integer arithmetic. Times are int64 nanoseconds; products such as
// Limit·Window reach 10^9 · 8.64·10^13 ≈ 2^76, so they are held in 128 bits.
// Every quotient taken here is known, from the bounds Spec.Validate enforces,
// to fit in 63 bits.

// u128 is an unsigned 128-bit integer.
type u128 struct{ hi, lo uint64 }

// mul returns a·b for non-negative a and b.
func mul(a, b int64) u128 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	return u128{hi, lo}
}

func (x u128) add(y u128) u128 {
	lo, c := bits.Add64(x.lo, y.lo, 0)
	return u128{x.hi + y.hi + c, lo}
}

func (x u128) add64(y int64) u128 { return x.add(u128{0, uint64(y)}) }

// sub returns x−y; it requires x >= y.
func (x u128) sub(y u128) u128 {
	lo, b := bits.Sub64(x.lo, y.lo, 0)
	return u128{x.hi - y.hi - b, lo}
}

func (x u128) cmp(y u128) int {
	switch {
	case x.hi < y.hi:
		return -1
	case x.hi > y.hi:
		return 1
	case x.lo < y.lo:
		return -1
	case x.lo > y.lo:
		return 1
	}
	return 0
}

func (x u128) less(y u128) bool { return x.cmp(y) < 0 }

// divmod returns floor(x/d) and x mod d for d > 0; the quotient must fit in 64 bits.
func (x u128) divmod(d int64) (q, r int64) {
	qq, rr := bits.Div64(x.hi, x.lo, uint64(d))
	return int64(qq), int64(rr)
}

// divCeil returns ceil(x/d) for d > 0; the quotient must fit in 63 bits.
func (x u128) divCeil(d int64) int64 {
	q, r := x.divmod(d)
	if r != 0 {
		q++
	}
	return q
}

// mulDivFloor returns floor(a·b/c) for a, b >= 0 and c > 0, saturating at
// MaxInt64 when the quotient does not fit.
func mulDivFloor(a, b, c int64) int64 {
	p := mul(a, b)
	if p.hi >= uint64(c) {
		return 1<<63 - 1
	}
	q, _ := p.divmod(c)
	if q < 0 {
		return 1<<63 - 1
	}
	return q
}

// mulDivCeil returns ceil(a·b/c) for a, b >= 0 and c > 0, saturating at MaxInt64.
func mulDivCeil(a, b, c int64) int64 {
	p := mul(a, b)
	if p.hi >= uint64(c) {
		return 1<<63 - 1
	}
	q, r := p.divmod(c)
	if q < 0 || (r != 0 && q == 1<<63-1) {
		return 1<<63 - 1
	}
	if r != 0 {
		q++
	}
	return q
}

// floorDiv returns floor(a/b) for b > 0, also for negative a.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
