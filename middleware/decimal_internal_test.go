package middleware

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestAppendInt pins appendInt to strconv.AppendInt: every length of
// number, the edges of each length (10^k - 1, 10^k), the ends of int64,
// negative numbers, and random ones; appended after existing bytes, into
// a buffer with room and into one without.
func TestAppendInt(t *testing.T) {
	ns := []int64{0, 1, 9, 10, 11, 42, 99, 100, 101, 999, 1000, 123456789, 999_999_999_999_999,
		math.MaxInt64, math.MaxInt64 - 1, -1, -10, -99, -100, math.MinInt64, math.MinInt64 + 1}
	for p := int64(1); p <= math.MaxInt64/10; p *= 10 {
		ns = append(ns, p-1, p, p+1, 10*p-1)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		ns = append(ns, rng.Int64()>>rng.IntN(64), -rng.Int64()>>rng.IntN(64))
	}
	for n := int64(0); n < 1000; n++ {
		ns = append(ns, n)
	}
	for _, n := range ns {
		for _, b := range [][]byte{nil, []byte("x;r="), make([]byte, 2, 40)} {
			want := strconv.AppendInt(append([]byte(nil), b...), n, 10)
			if got := appendInt(b, n); string(got) != string(want) {
				t.Fatalf("appendInt(%q, %d) = %q, want %q", b, n, got, want)
			}
		}
	}
}

// TestAppendIntNoAlloc pins that appendInt, with room in its buffer,
// allocates nothing.
func TestAppendIntNoAlloc(t *testing.T) {
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { buf = appendInt(buf[:0], math.MaxInt64) }); n != 0 {
		t.Errorf("appendInt allocates %v times, want 0", n)
	}
}

// TestEightDigits checks eightDigits against the digits of every x < 1e8,
// in both forms append8 writes, with and without leading zeros.
func TestEightDigits(t *testing.T) {
	// want holds the digits of x as eightDigits does, the first in the
	// low byte: a uint64 (not an array), so that the loop stays in
	// registers, fast under the race detector too.
	var want uint64
	for x := uint32(0); x < 1e8; x++ {
		if got := eightDigits(x); got != want {
			t.Fatalf("eightDigits(%d) = %#016x, want %#016x", x, got, want)
		}
		// want becomes the digits of x+1: the last digit (high byte)
		// goes up, a 9 carrying into the digit before it.
		for i := 7; i >= 0; i-- {
			if want>>(8*i)&0xff < 9 {
				want += 1 << (8 * i)
				break
			}
			want &^= 0xff << (8 * i)
		}
	}
	for _, x := range []uint32{1, 9, 10, 99, 100, 12345678, 99999999, 10000000, 1000, 70000001} {
		if got, want := string(append8(nil, x, false)), strconv.FormatUint(uint64(x), 10); got != want {
			t.Errorf("append8(nil, %d, false) = %q, want %q", x, got, want)
		}
		if got, want := string(append8([]byte("ab"), x, true)), "ab"+fmt.Sprintf("%08d", x); got != want {
			t.Errorf("append8(\"ab\", %d, true) = %q, want %q", x, got, want)
		}
	}
}

// TestAppendIntFullBuffer pins that appendInt, with room for the digits
// but not for the eight bytes it stores at once, appends into the room it
// has: no allocation, and the digits exact.
func TestAppendIntFullBuffer(t *testing.T) {
	for _, n := range []int64{12, 1234, 1234567, 12345678, 123456789, 999_999_999_999_999} {
		want := strconv.FormatInt(n, 10)
		buf := make([]byte, 3, 3+len(want))
		got := appendInt(buf, n)
		if string(got[3:]) != want {
			t.Errorf("appendInt(%d) = %q, want %q", n, got[3:], want)
		}
		if &got[0] != &buf[0] {
			t.Errorf("appendInt(%d) into a buffer with room for its %d digits moved it", n, len(want))
		}
	}
}
