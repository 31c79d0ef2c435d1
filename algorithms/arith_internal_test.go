package algorithms

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestMulDiv compares the 128-bit helpers with math/big over the ranges the
// algorithms use: factors up to MaxLimit·MaxWindow-sized products.
func TestMulDiv(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100_000; i++ {
		a := r.Int64N(MaxLimit + 1)
		b := r.Int64N(int64(MaxWindow) + 1)
		c := 1 + r.Int64N(int64(MaxWindow))
		if i%3 == 0 {
			c = 1 + r.Int64N(MaxLimit)
		}
		p := new(big.Int).Mul(big.NewInt(a), big.NewInt(b))
		q, m := new(big.Int).QuoRem(p, big.NewInt(c), new(big.Int))
		if !q.IsInt64() {
			continue
		}
		if got := mulDivFloor(a, b, c); got != q.Int64() {
			t.Fatalf("mulDivFloor(%d, %d, %d) = %d, want %s", a, b, c, got, q)
		}
		want := q.Int64()
		if m.Sign() != 0 {
			want++
		}
		if got := mulDivCeil(a, b, c); got != want {
			t.Fatalf("mulDivCeil(%d, %d, %d) = %d, want %d", a, b, c, got, want)
		}
		x := mul(a, b).add64(c)
		if got, want := new(big.Int).Add(p, big.NewInt(c)), new(big.Int).SetUint64(x.hi); got.Cmp(want.Lsh(want, 64).Add(want, new(big.Int).SetUint64(x.lo))) != 0 {
			t.Fatalf("mul(%d, %d).add64(%d) = %v, want %s", a, b, c, x, got)
		}
	}
	if got := mulDivFloor(1<<62, 1<<62, 1); got != 1<<63-1 {
		t.Errorf("mulDivFloor saturates to %d, want MaxInt64", got)
	}
}

// TestMulDivSaturates checks mulDivFloor and mulDivCeil where the quotient
// stops fitting in 63 bits (the random products of TestMulDiv skip those):
// a high word equal to the divisor (a quotient of 2^64 or more, which
// bits.Div64 cannot take), a quotient of exactly 2^63, and a ceiling that
// rounds MaxInt64 up.
func TestMulDivSaturates(t *testing.T) {
	const maxInt64 = 1<<63 - 1
	for _, tt := range []struct{ a, b, c, floor, ceil int64 }{
		{1 << 32, 1 << 32, 1, maxInt64, maxInt64},       // 2^64 / 1: high word 1 = c
		{3 << 32, 1 << 32, 3, maxInt64, maxInt64},       // 3·2^64 / 3: high word 3 = c
		{3 << 32, 1<<32 - 1, 3, maxInt64, maxInt64},     // high word 2 < c, quotient 2^64 − 2^32
		{1 << 62, 2, 1, maxInt64, maxInt64},             // quotient 2^63
		{1<<62 - 1, 2, 1, maxInt64 - 1, maxInt64 - 1},   // fits
		{maxInt64, 1, 1, maxInt64, maxInt64},            // exactly MaxInt64
		{3, 6148914691236517205, 2, maxInt64, maxInt64}, // (2^64 − 1)/2: floor MaxInt64, ceil 2^63
		{3, 6148914691236517205, 4, 1<<62 - 1, 1 << 62}, // (2^64 − 1)/4
		{4683 << 32, 1 << 32, 4683, maxInt64, maxInt64}, // high word 4683 = c
	} {
		if got := mulDivFloor(tt.a, tt.b, tt.c); got != tt.floor {
			t.Errorf("mulDivFloor(%d, %d, %d) = %d, want %d", tt.a, tt.b, tt.c, got, tt.floor)
		}
		if got := mulDivCeil(tt.a, tt.b, tt.c); got != tt.ceil {
			t.Errorf("mulDivCeil(%d, %d, %d) = %d, want %d", tt.a, tt.b, tt.c, got, tt.ceil)
		}
	}
}

func TestFloorDiv(t *testing.T) {
	for _, tt := range []struct{ a, b, want int64 }{
		{7, 2, 3}, {-7, 2, -4}, {-8, 2, -4}, {0, 5, 0}, {-1, 5, -1}, {5, 5, 1},
	} {
		if got := floorDiv(tt.a, tt.b); got != tt.want {
			t.Errorf("floorDiv(%d, %d) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
