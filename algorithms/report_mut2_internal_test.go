package algorithms

import (
	"math/big"
	"testing"
	"time"
)

// TestBucketReportFastPathCarry decides, with bucketReport's 64-bit fast
// path, a state whose deficit D·L = dt·L + x carries from the low word into
// the high one: dt·L = 2·2^64 − r, x = L−1 >= r. The Decision must be the
// exact one, Remaining = C − ceil(D·L/W) (random states almost never carry:
// TestBucketReportFastPath does not reach it).
func TestBucketReportFastPathCarry(t *testing.T) {
	const L = MaxLimit - 1
	p := newParams(Spec{Algorithm: TokenBucket, Limit: L, Window: MaxWindow})
	two64 := new(big.Int).Lsh(big.NewInt(1), 64)
	k2 := new(big.Int).Lsh(two64, 1)
	dtBig, r := new(big.Int).QuoRem(k2, big.NewInt(L), new(big.Int))
	if r.Sign() == 0 || r.Int64() > L-1 {
		t.Fatalf("2^65 mod L = %s: no carry", r)
	}
	dt := dtBig.Int64()
	now := int64(1e18)
	c := cell{t: now + dt, x: L - 1}
	// D·L = dt·L + x, past 2^65.
	dl := new(big.Int).Add(new(big.Int).Mul(dtBig, big.NewInt(L)), big.NewInt(L-1))
	if dl.Cmp(k2) < 0 {
		t.Fatalf("D·L = %s does not pass 2^65", dl)
	}
	ceilDiv := func(a *big.Int, b int64) int64 {
		q, m := new(big.Int).QuoRem(a, big.NewInt(b), new(big.Int))
		if m.Sign() != 0 {
			q.Add(q, big.NewInt(1))
		}
		return q.Int64()
	}
	used := ceilDiv(dl, int64(MaxWindow))
	// The wait for one unit more: D·L − (used−1)·W, in L units, rounded up.
	next := ceilDiv(new(big.Int).Sub(dl, new(big.Int).Mul(big.NewInt(used-1), big.NewInt(int64(MaxWindow)))), L)
	want := Decision{Allowed: true, Limit: L, Remaining: L - used, ResetAfter: time.Duration(ceilDiv(dl, L)), NextAfter: time.Duration(next)}
	var got, exact Decision
	p.bucketReport(&got, c, now, 1, true)
	p.bucketReportExact(&exact, c, now, 1, true)
	if got != want || exact != want {
		t.Errorf("state %+v at %d:\nbucketReport      %+v\nbucketReportExact %+v\nwant              %+v", c, now, got, exact, want)
	}
}
