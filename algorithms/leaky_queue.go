package algorithms

// leakyQueue is the shaper. The state is the instant N = c.t + c.x/L at which
// the queue is free; a request arriving at t waits D = max(0, N − t) and is
// admitted when D <= MaxDelay, after which N = max(N, t) + n·W/L. The unit
// requests that could still be admitted now are those whose wait
// D + k·W/L (k = 0, 1, ...) is at most MaxDelay: floor((MaxDelay·L − D·L)/W) + 1.
func (p *params) leakyQueue(c *cell, t, n int64, consume bool, d *Decision) {
	*d = Decision{Limit: p.capacity}
	dl := p.deficit(*c, t)
	switch {
	case dl.cmp(mul(p.maxDelay, p.limit)) > 0:
		d.RetryAfter = dur(p.queueWait(dl, 1))
	case consume:
		d.Allowed = true
		d.Delay = dur(dl.divCeil(p.limit))
		*c = p.advance(*c, t, n)
		dl = p.deficit(*c, t)
	default:
		d.Allowed = true
	}
	d.Remaining = p.queueAvail(dl)
	d.ResetAfter = dur(dl.divCeil(p.limit))
	if d.Remaining < p.capacity {
		d.NextAfter = dur(p.queueWait(dl, d.Remaining+1))
	}
}

// queueAvail returns how many unit requests the queue admits now, given dl = D·L.
func (p *params) queueAvail(dl u128) int64 {
	ml := mul(p.maxDelay, p.limit)
	if ml.less(dl) {
		return 0
	}
	q, _ := ml.sub(dl).divmod(p.window)
	return q + 1
}

// queueWait returns the shortest wait w after which m unit requests are
// admitted: (MaxDelay·L − (D−w)·L)/W >= m−1 ⇔ w·L >= (m−1)·W + D·L − MaxDelay·L.
func (p *params) queueWait(dl u128, m int64) int64 {
	need := mul(m-1, p.window).add(dl)
	ml := mul(p.maxDelay, p.limit)
	if !ml.less(need) {
		return 0
	}
	return need.sub(ml).divCeil(p.limit)
}

// refundQueue gives back, at instant t, the place of a request of cost n
// admitted to the queue c whose caller has rem left to wait (rem <= 0 once
// its departure has passed): see [Refunder]. The place is the last one
// when its departure N − n·W/L is within half a spacing W/(2L) of the
// caller's t + rem (a later request's place departs at least W/L after
// it): then N moves back by n·W/L, or to t (an empty queue) when less than
// that is left, and ok is true. Any other state is returned as it is.
func (p *params) refundQueue(c cell, t, n, rem int64) (_ cell, ok bool) {
	dl := p.deficit(c, t) // (N − t)·L
	if dl == (u128{}) {
		return c, false // the queue is empty: nothing is held
	}
	nw := mul(n, p.window)
	// N − n·W/L ≤ t + rem + W/(2L) ⇔ 2·dl ≤ 2·n·W + W + 2·rem·L (rem ≥ 0),
	// 2·dl + 2·|rem|·L ≤ 2·n·W + W (rem < 0).
	// 2·|rem| may pass MaxInt64 (a caller's wait is not bounded), but not
	// 2^64 for |rem| <= MaxInt64 (the callers keep rem > MinInt64): the
	// int64 product wraps, and mul, reading it as unsigned, takes it exactly.
	lhs, rhs := dl.add(dl), nw.add(nw).add64(p.window)
	if rem >= 0 {
		rhs = rhs.add(mul(2*rem, p.limit))
	} else {
		lhs = lhs.add(mul(-2*rem, p.limit))
	}
	if rhs.less(lhs) {
		return c, false
	}
	if !nw.less(dl) {
		return cell{t: t}, true // what is left of the place is all the queue held
	}
	return p.retreat(c, nw), true
}
