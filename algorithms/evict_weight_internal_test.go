package algorithms

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestCmpWeight checks cmpWeight, eviction's comparison of
// u1·min(u1, c1)/c1 with u2·min(u2, c2)/c2, against math/big, at the ends
// of int64 and around MaxLimit as well as at random.
func TestCmpWeight(t *testing.T) {
	want := func(u1, c1, u2, c2 int64) int {
		a := new(big.Int).Mul(big.NewInt(u1), big.NewInt(min(u1, c1)))
		a.Mul(a, big.NewInt(c2))
		b := new(big.Int).Mul(big.NewInt(u2), big.NewInt(min(u2, c2)))
		b.Mul(b, big.NewInt(c1))
		return a.Cmp(b)
	}
	edges := []int64{0, 1, 2, 3, 9, 10, 11, 100, MaxLimit - 1, MaxLimit, MaxLimit + 1, 1 << 32, math.MaxInt64 - 1, math.MaxInt64}
	check := func(u1, c1, u2, c2 int64) {
		t.Helper()
		if got, w := cmpWeight(u1, c1, u2, c2), want(u1, c1, u2, c2); got != w {
			t.Fatalf("cmpWeight(%d, %d, %d, %d) = %d, want %d", u1, c1, u2, c2, got, w)
		}
	}
	for _, u1 := range edges {
		for _, u2 := range edges {
			for _, c1 := range edges[1:] {
				for _, c2 := range edges[1:] {
					check(u1, c1, u2, c2)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		u1, u2 := r.Int64N(MaxLimit+1), r.Int64N(MaxLimit+1)
		c1, c2 := 1+r.Int64N(MaxLimit), 1+r.Int64N(MaxLimit)
		if r.IntN(4) == 0 {
			u1, u2, c1, c2 = r.Int64(), r.Int64(), 1+r.Int64N(math.MaxInt64), 1+r.Int64N(math.MaxInt64)
		}
		check(u1, c1, u2, c2)
		check(u1, c1, u1, c1)
		// Equal and next-to-equal weights from other factors: (u, c) and
		// (k·u, k²·c ± 1), u <= c, whose products carry differently.
		k := 2 + r.Int64N(1<<10)
		c := 1 + r.Int64N(math.MaxInt64/(k*k))
		u := 1 + r.Int64N(c)
		for _, d := range []int64{-1, 0, 1} {
			if k*k*c+d >= 1 {
				check(u, c, k*u, k*k*c+d)
				check(k*u, k*k*c+d, u, c)
			}
		}
		// Past the capacity a key weighs its units: (u, c) and (u, c'),
		// both capacities at most u, weigh the same, whatever they are;
		// (u, c) and (u ± 1, c') do not.
		u = 1 + r.Int64N(math.MaxInt64-1)
		c1, c2 = 1+r.Int64N(u), 1+r.Int64N(u)
		for _, d := range []int64{-1, 0, 1} {
			check(u, c1, u+d, c2)
			check(u+d, c2, u, c1)
		}
		if got := cmpWeight(u, c1, u, c2); got != 0 {
			t.Fatalf("cmpWeight(%d, %d, %d, %d) = %d, want 0: past its capacity a key weighs its units", u, c1, u, c2, got)
		}
	}
}
