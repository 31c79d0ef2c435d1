package middleware

import (
	"encoding/binary"
	"math/bits"
	"strconv"
)

// appendInt appends the decimal form of n to b, as strconv.AppendInt(b, n,
// 10) does, in fewer instructions for the numbers the rate-limit headers
// write (two to four per policy, all non-negative): one or two digits (a
// delta-seconds, mostly) directly, longer numbers eight digits at a time,
// computed together in one uint64 (see eightDigits) and stored at once,
// where strconv writes two at a time into a buffer of its own and copies
// them. A negative n (only a LegacyUnix reset before 1970) goes to
// strconv.
//
// Unlike strconv, it may write up to seven bytes past the digits, in b's
// spare capacity: b must be a buffer nothing else reads beyond its length
// (the header values are built in fresh buffers; see setHeadersAt).
func appendInt(b []byte, n int64) []byte {
	if n < 0 {
		return strconv.AppendInt(b, n, 10)
	}
	u := uint64(n)
	if u < 100 {
		if u < 10 {
			return append(b, byte('0'+u))
		}
		return append(b, byte('0'+u/10), byte('0'+u%10))
	}
	if u < 1e8 {
		return append8(b, uint32(u), false)
	}
	// Nine digits or more (at most 19): the first ones (at most 11),
	// then the last eight with their leading zeros. The first are one
	// digit for a count near algorithms.MaxLimit (a Remaining of nine
	// digits), at most eight below 10^16, else three and eight.
	hi := u / 1e8
	switch {
	case hi < 10:
		b = append(b, byte('0'+hi))
	case hi < 1e8:
		b = append8(b, uint32(hi), false)
	default:
		top := hi / 1e8
		b = append8(b, uint32(top), false)
		b = append8(b, uint32(hi-top*1e8), true)
	}
	return append8(b, uint32(u-hi*1e8), true)
}

// append8 appends x < 1e8 in decimal: all eight digits, leading zeros
// included, when full; else (then x > 0) without its leading zeros. When
// b has room for eight bytes past its end they are stored there at once
// and b is extended over the digits that count; else (a buffer nearly
// full, which the digits may still fit) they are appended from a copy.
func append8(b []byte, x uint32, full bool) []byte {
	v := eightDigits(x)
	k := 8
	if !full {
		// The leading zeros are the low bytes: the first digit is at
		// the lowest address.
		z := bits.TrailingZeros64(v) / 8
		v >>= 8 * z
		k -= z
	}
	v |= 0x3030303030303030 // digits to ASCII
	if l := len(b); cap(b)-l >= 8 {
		binary.LittleEndian.PutUint64(b[l:l+8], v) // the bytes past k are cut off
		return b[:l+k]
	}
	var a [8]byte
	binary.LittleEndian.PutUint64(a[:], v)
	return append(b, a[:k]...)
}

// eightDigits returns the eight decimal digits of x < 1e8 (leading zeros
// included) as the bytes of a uint64, the first digit in the lowest byte
// (the order a little-endian store writes them in). The digits are split
// in lanes that never carry into each other: x into two 4-digit halves in
// 32-bit lanes, each into two 2-digit quarters in 16-bit lanes (q = x/100
// as x*5243>>19, exact for x < 10000), each into two digits in 8-bit
// lanes (q = x/10 as x*103>>10, exact for x < 100). Every lane's product
// stays below its lane's next one (9999*5243 < 2^32, 99*103 < 2^16), and
// the bits a shift brings in from the lane above are masked off.
func eightDigits(x uint32) uint64 {
	v := uint64(x/10000) | uint64(x%10000)<<32
	q := v * 5243 >> 19 & 0x0000007F_0000007F
	v = q | (v-q*100)<<16
	q = v * 103 >> 10 & 0x000F_000F_000F_000F
	return q | (v-q*10)<<8
}
