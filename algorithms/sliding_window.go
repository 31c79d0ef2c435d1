package algorithms

// slidingWindow is the two-counter estimate: with e = t − kW, the request is
// allowed when prev·(W−e)/W + curr + n <= L. Since curr and n are integers,
// that is exactly curr + n + ceil(prev·(W−e)/W) <= L, and the whole units
// available are L − curr − ceil(prev·(W−e)/W).
func (p *params) slidingWindow(c *cell, t, n int64, consume bool, d *Decision) {
	W := p.window
	if t < c.t {
		// The clock went back: decide at the start of the key's window.
		back := c.t - t
		p.slidingWindow(c, c.t, n, consume, d)
		*d = d.later(back)
		return
	}
	switch e := t - c.t; {
	case e < W:
	case e < 2*W:
		*c = cell{t: c.t + W, x: c.y}
	default:
		*c = cell{t: p.windowStart(t)}
	}
	e := t - c.t
	prev, curr := int64(c.x), int64(c.y)
	*d = Decision{Limit: p.limit}
	avail := p.limit - curr
	if prev > 0 {
		avail -= mulDivCeil(prev, W-e, W)
	}
	if avail >= n {
		d.Allowed = true
		if consume {
			curr += n
			avail -= n
			c.y = uint32(curr)
		}
	} else {
		d.RetryAfter = dur(p.slidingWait(prev, curr, e, n))
	}
	d.Remaining = max(avail, 0)
	switch {
	case curr > 0:
		d.ResetAfter = dur(2*W - e)
	case prev > 0:
		d.ResetAfter = dur(W - e)
	}
	if d.Remaining < p.limit {
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
