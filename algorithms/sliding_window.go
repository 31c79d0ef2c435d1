package algorithms

import (
	"math/bits"
	"time"
)

// slidingWindow is the two-counter estimate: with e = t − kW, the request is
// allowed when prev·(W−e)/W + curr + n <= L. Since curr and n are integers,
// that is exactly curr + n + ceil(prev·(W−e)/W) <= L, and the whole units
// available are L − curr − ceil(prev·(W−e)/W).
func (p *params) slidingWindow(c *cell, t, n int64, consume bool, d *Decision) {
	if t < c.t {
		// The clock went back: decide at the start of the key's window.
		back := c.t - t
		p.slidingWindow(c, c.t, n, consume, d)
		*d = d.later(back)
		return
	}
	var (
		ok    bool
		avail int64
	)
	*c, ok, avail = p.slidingAdmit(*c, t, n, consume)
	p.slidingReport(d, *c, t, n, ok, avail)
}

// slidingAdmit returns c moved to the window of t (t >= c.t) and reports
// whether n units are available, counting them in the state it returns when
// they are and consume is true. It also returns the whole units available
// after that. (Values, as fixedAdmit's.)
func (p *params) slidingAdmit(c cell, t, n int64, consume bool) (cell, bool, int64) {
	W := p.window
	switch e := t - c.t; {
	case e < W:
	case e < 2*W:
		c = cell{t: c.t + W, x: c.y}
	default:
		c = cell{t: p.windowStart(t)}
	}
	avail := p.limit - int64(c.y)
	if c.x > 0 {
		avail -= mulDivCeil(int64(c.x), W-(t-c.t), W)
	}
	if avail < n {
		return c, false, avail
	}
	if consume {
		c.y += uint32(n)
		avail -= n
	}
	return c, true, avail
}

// slidingAdmitQuick is slidingAdmit consuming, in line, for a state in the
// window of t (t >= c.t) whose previous window is empty (c.x = 0), and
// reports true in done; for any other state it decides nothing and
// reports false, with c as it was. (TakeOne calls slidingAdmitWeighed for
// a state whose previous window has a count.)
func (p *params) slidingAdmitQuick(c cell, t, n int64) (nc cell, ok bool, avail int64, done bool) {
	if t-c.t >= p.window || c.x > 0 {
		return c, false, 0, false
	}
	avail = p.limit - int64(c.y)
	if avail < n {
		return c, false, avail, true
	}
	c.y += uint32(n)
	return c, true, avail - n, true
}

// slidingAdmitWeighed is slidingAdmit consuming, in line, for a state in
// the window of t (0 <= e = t − c.t < W), whatever its previous window
// holds, and reports true in done; for any other state it decides nothing
// and reports false, with c as it was. It is a hot key's steady state:
// the previous window has a count, which the estimate weighs.
//
// The weight, ceil(prev·(W−e)/W), is prev − floor(prev·e/W) (prev·(W−e)/W
// = prev − prev·e/W, and prev is whole): a 128-bit product and one
// division. prev·e < 2^32·W, so the product's high half is below W
// (Div64 does not panic) and the quotient is at most prev. (Its inlining
// cost is 80, the budget, by -gcflags=-m=2; for an empty previous window
// slidingAdmitQuick is cheaper, with neither product nor division.)
func (p *params) slidingAdmitWeighed(c cell, t, n int64) (nc cell, ok bool, avail int64, done bool) {
	e := t - c.t
	if e >= p.window {
		return c, false, 0, false
	}
	hi, lo := bits.Mul64(uint64(c.x), uint64(e))
	q, _ := bits.Div64(hi, lo, uint64(p.window))
	avail = p.limit - int64(c.y) - int64(c.x) + int64(q)
	if avail < n {
		return c, false, avail, true
	}
	c.y += uint32(n)
	return c, true, avail - n, true
}

// slidingReportQuick is slidingReport for a request slidingAdmitQuick
// admitted (done and ok), given the state and the units available it
// returned: the previous window is empty and 1 <= curr <= L, the case of
// slidingReport's shortcut. In line; it sets each field of *d once, as
// fixedReport does.
func (p *params) slidingReportQuick(d *Decision, c cell, t, avail int64) {
	W, curr := p.window, int64(c.y)
	left := W - (t - c.t) // of the current window
	d.Allowed, d.Limit, d.Remaining = true, p.limit, avail
	d.RetryAfter, d.ResetAfter, d.NextAfter, d.Delay = 0, dur(left+W), dur(left+int64(uint64(W+curr-1)/uint64(curr))), 0
}

// slidingReportWeighed is slidingReport for a request slidingAdmitWeighed
// admitted (done and ok) on a state whose previous window has a count
// (prev >= 1), given the state and the units available it returned: curr
// >= 1, and the previous window's weight w = ceil(prev·(W−e)/W), which is
// L − curr − avail, is at least 1 (W−e >= 1). In line; it sets each field
// of *d once, as fixedReport does (time.Duration, not dur: within the
// inlining budget).
//
// NextAfter is slidingWait(prev, curr, e, avail+1). There a =
// L−curr−(avail+1) = w−1 >= 0, and f = floor((w−1)·W/prev) is below W−e
// (w−1 < prev·(W−e)/W), so the wait is W−e−f when f > 0. When f = 0 the
// next window's f' = floor((curr+w−1)·W/curr) is at least W (w >= 1), and
// the wait is W−e: W−e−f again. w−1 < prev, so the high half of
// (w−1)·W is below prev (Div64 does not panic).
func (p *params) slidingReportWeighed(d *Decision, c cell, t, avail int64) {
	W := p.window
	left := W - (t - c.t) // of the current window
	hi, lo := bits.Mul64(uint64(p.limit-int64(c.y)-avail-1), uint64(W))
	f, _ := bits.Div64(hi, lo, uint64(c.x))
	d.Allowed, d.Limit, d.Remaining = true, p.limit, avail
	d.RetryAfter, d.ResetAfter, d.NextAfter, d.Delay = 0, time.Duration(left+W), time.Duration(left-int64(f)), 0
}

// slidingReport writes to *d the Decision of a request of cost n decided
// at t with outcome ok, given the state c and the units available avail
// after slidingAdmit.
func (p *params) slidingReport(d *Decision, c cell, t, n int64, ok bool, avail int64) {
	W := p.window
	e := t - c.t
	prev, curr := int64(c.x), int64(c.y)
	*d = Decision{Allowed: ok, Limit: p.limit, Remaining: max(avail, 0)}
	if !ok {
		d.RetryAfter = dur(p.slidingWait(prev, curr, e, n))
	}
	switch {
	case curr > 0:
		d.ResetAfter = dur(2*W - e)
	case prev > 0:
		d.ResetAfter = dur(W - e)
	}
	switch {
	case prev == 0 && uint64(curr-1) < uint64(p.limit):
		// 1 <= curr <= L, in one comparison (curr >= 0: curr−1 wraps to
		// 2^64−1 for 0). slidingWait(0, curr, e, L−curr+1): the next
		// window, where the wait W−e+W−floor((curr−1)·W/curr) is
		// W−e+ceil(W/curr), with no 128-bit product. Not for a count above
		// the limit (a check judged below the limit its Spec's count was
		// kept at, or at its Spec's below a count checks judged higher
		// took: see [Check.Limit]), where Remaining is 0, not L−curr, and
		// the wait for one unit is longer.
		d.NextAfter = dur(W - e + (W+curr-1)/curr)
	case d.Remaining < p.limit:
		d.NextAfter = dur(p.slidingWait(prev, curr, e, d.Remaining+1))
	}
}

// slidingWait returns the shortest wait after which at least m units
// (1 <= m <= L) are available, with counts prev and curr at offset e into
// the current window, if nothing else arrives.
func (p *params) slidingWait(prev, curr, e, m int64) int64 {
	W := p.window
	// Within the current window: ceil(prev·(W−e−d)/W) <= a.
	if a := p.limit - curr - m; a >= 0 {
		if prev == 0 {
			return 0
		}
		f := mulDivFloor(a, W, prev) // W−e−d <= f
		if f >= W-e {
			return 0
		}
		if f > 0 {
			return W - e - f
		}
	}
	// In the next window, curr has become prev: ceil(curr·(W−e')/W) <= L−m.
	if curr == 0 {
		return W - e
	}
	f := mulDivFloor(p.limit-m, W, curr) // W−e' <= f
	if f >= W {
		return W - e
	}
	if f > 0 {
		return W - e + W - f
	}
	// Only the window after that is empty.
	return 2*W - e
}

// slidingRepeat corrects *d, the Decision of a denied check of cost n
// decided at t on c, the state after the earlier checks of its Take on its
// key, which cost ahead > 0 and are counted in c's current window (the
// window of t, or of c.t when the clock went back): RetryAfter becomes the
// wait of one check of cost ahead+n on the state before them, so that the
// whole Take is admitted after it. On c the wait would count those units
// as the previous window's after a window boundary, where a retry counts
// them again in its own. (NextAfter needs nothing: slidingReport reckons
// it in full for a count above the limit, which the earlier checks, a
// denied one counted as admitted, may pass.)
//
// ahead+n is at most Limit (ValidateChecks, at the limit p is judged at).
func (p *params) slidingRepeat(d *Decision, c cell, t, ahead, n int64) {
	te := max(t, c.t)
	c, _, _ = p.slidingAdmit(c, te, 0, false) // moved to the window of te
	e, prev, curr := te-c.t, int64(c.x), int64(c.y)
	d.RetryAfter = dur(te - t + p.slidingWait(prev, curr-ahead, e, ahead+n))
}

// slidingGiveBack gives back at t cost n counted by a Take whose key was
// to be clear at t + r, two windows after the start of the Take's window
// (see [GiveBacker.GiveBack]): the counter holding it, the current window's
// or the previous one's, drops by n, never below 0. When nothing comes
// back it returns c as it was, not moved to the window of t: a key's
// window is where a request at an earlier instant is decided.
func (p *params) slidingGiveBack(c cell, t, n, r int64) (cell, bool) {
	W := p.window
	orig := c
	if t >= c.t {
		// Moved to the window of t, as slidingAdmit does.
		switch e := t - c.t; {
		case e < W:
		case e < 2*W:
			c = cell{t: c.t + W, x: c.y}
		default:
			return c, false // both windows have passed
		}
	}
	start := (windowOf(t+r, W) - 1) * W
	switch {
	case start == c.t && c.y > 0:
		c.y -= uint32(min(n, int64(c.y)))
	case start == c.t-W && c.x > 0:
		c.x -= uint32(min(n, int64(c.x)))
	default:
		return orig, false
	}
	return c, true
}
