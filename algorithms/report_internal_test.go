package algorithms

import (
	"math/rand/v2"
	"testing"
	"time"
)

// randomSpec returns a valid spec of kind k with a limit and window drawn
// from the whole allowed range.
func randomSpec(r *rand.Rand, k Kind) Spec {
	for {
		s := Spec{Algorithm: k, Limit: 1 + r.Int64N(MaxLimit), Window: MinWindow + time.Duration(r.Int64N(int64(MaxWindow-MinWindow)))}
		if r.IntN(3) == 0 {
			s.Limit = 1 + r.Int64N(1000)
		}
		if k == TokenBucket && r.IntN(2) == 0 {
			s.Burst = 1 + r.Int64N(s.Limit)
		}
		if s.Validate() == nil {
			return s
		}
	}
}

// TestBucketReportFastPath compares bucketReport, which works in 64 bits
// when it can, with bucketReportExact on random states.
func TestBucketReportFastPath(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 200_000 {
		p := newParams(randomSpec(r, TokenBucket))
		now := int64(1e18) + r.Int64N(int64(MaxWindow))
		// A state up to a full refill ahead of now (or, rarely, further).
		ahead := mulDivCeil(p.capacity, p.window, p.limit)
		c := cell{t: now - p.window + r.Int64N(ahead+p.window), x: uint32(r.Int64N(p.limit))}
		if r.IntN(50) == 0 {
			c.t = now + ahead + r.Int64N(int64(MaxWindow))
		}
		if r.IntN(20) == 0 {
			c.x = 0
		}
		n := 1 + r.Int64N(p.capacity)
		c, ok := p.bucketAdmit(c, now, n, true)
		var got, want Decision
		p.bucketReport(&got, c, now, n, ok)
		p.bucketReportExact(&want, c, now, n, ok)
		if got != want {
			t.Fatalf("params %+v, state %+v at %d, cost %d, ok %v:\nbucketReport      %+v\nbucketReportExact %+v", p, c, now, n, ok, got, want)
		}
	}
}

// TestSlidingNextAfterFastPath compares slidingReport's NextAfter for an
// empty previous window with slidingWait.
func TestSlidingNextAfterFastPath(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 200_000 {
		p := newParams(randomSpec(r, SlidingWindow))
		curr := 1 + r.Int64N(p.limit)
		e := r.Int64N(p.window)
		c := cell{t: 1e18, y: uint32(curr)}
		var d Decision
		p.slidingReport(&d, c, c.t+e, 1, true, p.limit-curr)
		if want := dur(p.slidingWait(0, curr, e, p.limit-curr+1)); d.NextAfter != want {
			t.Fatalf("params %+v, curr %d, e %d: NextAfter %d, slidingWait %d", p, curr, e, d.NextAfter, want)
		}
	}
}
