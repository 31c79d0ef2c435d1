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

// TestBucketReportWholeEmission compares, on random states of buckets whose
// window is a whole number of nanoseconds a unit (W = k·L: most limits in
// practice), bucketAdmitQuick with bucketAdmit, and bucketReport and
// bucketReportWhole (after an admission) with bucketReportExact.
func TestBucketReportWholeEmission(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for i := range 200_000 {
		s := randomSpec(r, TokenBucket)
		// W = k·L within [MinWindow, MaxWindow]: k from 1 (L up to 10^9
		// ns a window) to MaxWindow/L.
		kMin := max(1, (int64(MinWindow)+s.Limit-1)/s.Limit)
		kMax := int64(MaxWindow) / s.Limit
		if kMax < kMin {
			continue
		}
		k := kMin + r.Int64N(kMax-kMin+1)
		if i%4 == 0 {
			k = kMin + r.Int64N(min(kMax-kMin+1, 3)) // a few ns a unit: b·L + x near W
		}
		s.Window = time.Duration(k * s.Limit)
		if s.Validate() != nil {
			t.Fatalf("spec %+v invalid", s)
		}
		p := newParams(s)
		if p.emR != 0 {
			t.Fatalf("params %+v: emR %d, want 0", p, p.emR)
		}
		now := int64(1e18) + r.Int64N(int64(MaxWindow))
		ahead := mulDivCeil(p.capacity, p.window, p.limit)
		c := cell{t: now - p.window + r.Int64N(ahead+p.window), x: uint32(r.Int64N(p.limit))}
		switch r.IntN(50) {
		case 0:
			c.t = now + ahead + r.Int64N(int64(MaxWindow)) // the clock went back: more than empty
		case 1, 2:
			c.t = now + p.emQ*r.Int64N(p.capacity+1) // on a unit's boundary
		}
		if r.IntN(5) == 0 {
			c.x = 0
		}
		n := 1 + r.Int64N(p.capacity)
		if r.IntN(2) == 0 {
			n = 1 + r.Int64N(min(p.capacity, 3))
		}
		c0 := c
		qc, qok := p.bucketAdmitQuick(c, now, n)
		c, ok := p.bucketAdmit(c, now, n, true)
		if qc != c || qok != ok {
			t.Fatalf("params %+v, state %+v at %d, cost %d: bucketAdmitQuick %+v %v, bucketAdmit %+v %v", p, c0, now, n, qc, qok, c, ok)
		}
		var got, want Decision
		p.bucketReport(&got, c, now, n, ok)
		p.bucketReportExact(&want, c, now, n, ok)
		if got != want {
			t.Fatalf("params %+v, state %+v at %d, cost %d, ok %v:\nbucketReport      %+v\nbucketReportExact %+v", p, c, now, n, ok, got, want)
		}
		if ok {
			// TakeOne's in-line report of a quick admission.
			var whole Decision
			p.bucketReportWhole(&whole, c, now)
			if whole != want {
				t.Fatalf("params %+v, state %+v at %d, cost %d:\nbucketReportWhole %+v\nbucketReportExact %+v", p, c, now, n, whole, want)
			}
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

// TestSlidingQuickPath compares TakeOne's in-line path — slidingAdmitQuick
// and slidingReportQuick for a state whose previous window is empty,
// slidingAdmitWeighed and slidingReportWeighed for one with a count there
// (the steady state of a hot key) — with slidingAdmit and slidingReport on
// random states: in the window of t or not, at the limit or below. It
// draws the boundaries often: an offset of 0, 1 or W−1 into the window, or
// one where the previous window's weight ceil(prev·(W−e)/W) steps (e·prev
// a multiple of W, or one off); counts of 0, 1, the limit, or above it
// (up to 2^32−1); the shortest and the longest window and the highest
// limit. slidingAdmitWeighed is also run on an empty previous window,
// which it decides too.
func TestSlidingQuickPath(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	// count draws a window's count: often a boundary.
	count := func(lim int64) uint32 {
		switch r.IntN(8) {
		case 0:
			return 0
		case 1:
			return 1
		case 2:
			return uint32(lim)
		case 3:
			return uint32(lim - r.Int64N(min(lim, 3)))
		case 4:
			return uint32(lim + 1 + r.Int64N(1<<32-1-lim)) // above the limit
		}
		return uint32(r.Int64N(lim + 1))
	}
	var quickEmpty, quickPrev, denied int
	for range 200_000 {
		s := randomSpec(r, SlidingWindow)
		switch r.IntN(8) {
		case 0:
			s.Window = MaxWindow
		case 1:
			s.Window = MinWindow
		}
		if r.IntN(8) == 0 {
			s.Limit = MaxLimit
		}
		p := newParams(s)
		W := p.window
		c := cell{t: 1e18, x: count(p.limit), y: count(p.limit)}
		if r.IntN(4) == 0 {
			c.x = 0 // a first window
		}
		if r.IntN(3) == 0 {
			c.y = uint32(r.Int64N(min(p.limit, 3) + 1)) // room left
		}
		var e int64
		switch r.IntN(10) {
		case 0:
			e = 0
		case 1:
			e = 1
		case 2:
			e = W - 1
		case 3:
			e = r.Int64N(3 * W) // often past the window of c
		case 4, 5:
			if c.x > 0 {
				// Where the weight steps: e·prev near a multiple of W.
				j := r.Int64N(int64(c.x) + 1)
				e = mulDivFloor(j, W, int64(c.x)) + r.Int64N(3) - 1
				e = min(max(e, 0), W-1)
				break
			}
			fallthrough
		default:
			e = r.Int64N(W)
		}
		now := c.t + e
		n := 1 + r.Int64N(p.limit)
		if r.IntN(2) == 0 {
			n = 1 + r.Int64N(min(p.limit, 3))
		}
		wc, wok, wavail := p.slidingAdmit(c, now, n, true)
		var want Decision
		p.slidingReport(&want, wc, now, n, wok, wavail)
		for _, weighed := range []bool{false, true} {
			admit, report, name := p.slidingAdmitQuick, p.slidingReportQuick, "Quick"
			if weighed {
				admit, report, name = p.slidingAdmitWeighed, p.slidingReportWeighed, "Weighed"
			}
			gc, gok, gavail, done := admit(c, now, n)
			if !done {
				if gc != c {
					t.Fatalf("params %+v, state %+v at %d (e %d), cost %d: slidingAdmit%s not done, state %+v, want it unchanged", p, c, now, e, n, name, gc)
				}
				if e < W && (weighed || c.x == 0) {
					t.Fatalf("params %+v, state %+v at %d (e %d), cost %d: slidingAdmit%s not done", p, c, now, e, n, name)
				}
				continue
			}
			if gc != wc || gok != wok || gavail != wavail {
				t.Fatalf("params %+v, state %+v at %d (e %d), cost %d: slidingAdmit%s %+v %v %d, slidingAdmit %+v %v %d", p, c, now, e, n, name, gc, gok, gavail, wc, wok, wavail)
			}
			if !gok {
				if weighed {
					denied++
				}
				continue
			}
			switch {
			case !weighed:
				quickEmpty++
			case c.x > 0:
				quickPrev++
			default:
				continue // slidingReportQuick's case: TakeOne reports it so
			}
			var got Decision
			report(&got, gc, now, gavail)
			if got != want {
				t.Fatalf("params %+v, state %+v at %d (e %d), cost %d:\nslidingReport%s %+v\nslidingReport        %+v", p, gc, now, e, n, name, got, want)
			}
		}
	}
	t.Logf("admitted on the quick path: %d with an empty previous window, %d with a count in it; %d denied", quickEmpty, quickPrev, denied)
	if quickEmpty < 20_000 || quickPrev < 50_000 || denied < 20_000 {
		t.Errorf("admitted on the quick path: %d with an empty previous window, %d with a count in it (want at least 20,000 and 50,000); %d denied (want at least 20,000)", quickEmpty, quickPrev, denied)
	}
}
