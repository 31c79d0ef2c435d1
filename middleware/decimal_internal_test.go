package middleware

import (
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
