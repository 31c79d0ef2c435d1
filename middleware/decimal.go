package middleware

import (
	"encoding/binary"
	"strconv"
)

// appendInt appends the decimal form of n to b, as strconv.AppendInt(b, n,
// 10) does, in fewer instructions for the numbers the rate-limit headers
// write (two to four per policy, all non-negative): strconv's AppendInt
// goes through AppendUint and a general base-10 loop that also splits
// numbers at 10^9. A negative n (only a LegacyUnix reset before 1970)
// goes to strconv.
func appendInt(b []byte, n int64) []byte {
	if n < 0 {
		return strconv.AppendInt(b, n, 10)
	}
	u := uint64(n)
	if u < 10 {
		return append(b, byte('0'+u))
	}
	// The digits are written from the end of a, two at a time, its index
	// masked so that it needs no bounds check.
	var a [32]byte
	i := uint(len(a))
	for u >= 100 {
		q := u / 100
		i -= 2
		binary.LittleEndian.PutUint16(a[i&31:], digitPairs[u-q*100])
		u = q
	}
	if u >= 10 {
		i -= 2
		binary.LittleEndian.PutUint16(a[i&31:], digitPairs[u])
	} else {
		i--
		a[i&31] = byte('0' + u)
	}
	return append(b, a[i&31:]...)
}

// digitPairs holds the two digits of each of 0 to 99 as one little-endian
// uint16 of their ASCII bytes, so that one store writes both.
var digitPairs = func() (t [100]uint16) {
	for i := range t {
		t[i] = uint16('0'+i/10) | uint16('0'+i%10)<<8
	}
	return t
}()
