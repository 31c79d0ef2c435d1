package policy

import (
	"math/bits"
	"strings"
	"time"
)

// durationUnits are the units of time.ParseDuration, in nanoseconds.
var durationUnits = map[string]uint64{
	"ns": 1,
	"us": uint64(time.Microsecond),
	"µs": uint64(time.Microsecond), // U+00B5, micro sign
	"μs": uint64(time.Microsecond), // U+03BC, Greek mu
	"ms": uint64(time.Millisecond),
	"s":  uint64(time.Second),
	"m":  uint64(time.Minute),
	"h":  uint64(time.Hour),
}

// maxFractionDigits is the most significant digits a fraction of a whole
// number of nanoseconds can have, in any unit: a fraction b/10^L (b not a
// multiple of 10) times a unit u is whole only if 2^L or 5^L divides u,
// and the largest powers of 2 and 5 dividing a unit are 2^13 and 5^11
// (an hour, 2^13·3^2·5^11 ns).
const maxFractionDigits = 13

// pow10 holds 10^0 to 10^maxFractionDigits.
var pow10 = func() (p [maxFractionDigits + 1]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// exactDuration returns the duration s denotes, s being one that
// time.ParseDuration accepts, computed exactly: ParseDuration drops a
// fraction of a nanosecond ("1.0000000001s" is 1s) and computes fractions
// in floating point ("0.50000000000000h" is 29m59.999999999s). whole
// reports whether each number of s times its unit is a whole number of
// nanoseconds ("0.5ns0.5ns" is not), inRange whether their sum fits in a
// time.Duration; d is that sum when both hold.
func exactDuration(s string) (d time.Duration, whole, inRange bool) {
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "0" { // the one number without a unit
		return 0, true, true
	}
	const limit = 1 << 63 // the magnitude of the most negative Duration
	var total uint64      // magnitude, at most limit
	whole, inRange = true, true
	for s != "" {
		i := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		intDigits := s[:i]
		s = s[i:]
		var frac string
		if s != "" && s[0] == '.' {
			i = 1
			for i < len(s) && '0' <= s[i] && s[i] <= '9' {
				i++
			}
			frac = s[1:i]
			s = s[i:]
		}
		i = 0
		for i < len(s) && s[i] != '.' && (s[i] < '0' || s[i] > '9') {
			i++
		}
		unit := durationUnits[s[:i]]
		s = s[i:]
		if unit == 0 {
			return 0, false, false // not ParseDuration's syntax: never here
		}
		var n uint64 // the whole units
		for _, c := range []byte(intDigits) {
			hi, lo := bits.Mul64(n, 10)
			lo, carry := bits.Add64(lo, uint64(c-'0'), 0)
			if hi != 0 || carry != 0 || lo > limit {
				inRange = false
				lo = limit
			}
			n = lo
		}
		hi, v := bits.Mul64(n, unit)
		if hi != 0 || v > limit {
			inRange, v = false, limit
		}
		for frac != "" && frac[len(frac)-1] == '0' {
			frac = frac[:len(frac)-1]
		}
		if len(frac) > maxFractionDigits {
			whole = false
		} else {
			var b uint64
			for _, c := range []byte(frac) {
				b = b*10 + uint64(c-'0')
			}
			// b < 10^L and unit < 2^42: b·unit < 10^L·2^64, so the high
			// word is below the divisor, as bits.Div64 requires.
			hi, lo := bits.Mul64(b, unit)
			q, rem := bits.Div64(hi, lo, pow10[len(frac)])
			whole = whole && rem == 0
			v += q // v <= limit and q < unit: no overflow
		}
		if total += v; total < v || total > limit {
			inRange, total = false, limit
		}
	}
	if !neg && total > limit-1 {
		inRange = false
	}
	if !inRange {
		return 0, whole, false
	}
	if neg {
		return time.Duration(-int64(total)), whole, true // -(1<<63) wraps to itself
	}
	return time.Duration(total), whole, true
}

// shortDuration returns d as time.Duration.String writes it, without the
// zero minutes and seconds it ends with ("1h" for 1h0m0s, "1m30s"), as a
// file would write it.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
