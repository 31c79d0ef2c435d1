package algorithms

import "math/bits"

// tokenBucket decides token_bucket and leaky_bucket, which are the same
// machine seen from two sides (tokens = capacity − level). The state is the
// instant F = c.t + c.x/L at which the bucket is full (GCRA's theoretical
// arrival time). With D = max(0, F − t), the bucket holds C − D·L/W tokens,
// so the whole units available are C − ceil(D·L/W); a request of cost n
// moves F to max(F, t) + n·W/L.
func (p *params) tokenBucket(c *cell, t, n int64, consume bool, d *Decision) {
	ok := p.bucketAdmit(c, t, n, consume)
	p.bucketReport(d, *c, t, n, ok)
}

// bucketAdmit reports whether n tokens are there at t, and takes them when
// they are and consume is true.
func (p *params) bucketAdmit(c *cell, t, n int64, consume bool) bool {
	// n tokens are there when C − ceil(D·L/W) >= n, that is D·L <= (C−n)·W:
	// always when the bucket is full (D = 0, n <= C). Whether it is full is
	// tested once, for deficit and for advance.
	full := c.t < t || (c.t == t && c.x == 0)
	if !full && mul(p.capacity-n, p.window).less(mul(c.t-t, p.limit).add64(int64(c.x))) {
		return false
	}
	if !consume {
		return true
	}
	// advance, in line for a cost of 1.
	if full {
		*c = cell{t: t}
	}
	if n != 1 {
		*c = p.advanceBy(*c, n)
	} else {
		*c = p.moveOn(*c, p.emQ, p.emR)
	}
	return true
}

// bucketReport writes to *d the Decision of a request of cost n decided at
// t with outcome ok, given the state c after bucketAdmit.
func (p *params) bucketReport(d *Decision, c cell, t, n int64, ok bool) {
	if c.t < t || (c.t == t && c.x == 0) {
		// Full (D = 0): every cost up to C is admitted, nothing to wait for.
		*d = Decision{Allowed: ok, Limit: p.capacity, Remaining: p.capacity}
		return
	}
	dt := c.t - t // D = dt + x/L, with 0 <= x < L
	hi, lo := bits.Mul64(uint64(dt), uint64(p.limit))
	lo, carry := bits.Add64(lo, uint64(c.x), 0)
	hi += carry // D·L
	if ok && hi < uint64(p.window) {
		// One division, whose quotient fits in 64 bits; none for ResetAfter.
		q, rem := bits.Div64(hi, lo, uint64(p.window)) // ceil(D·L/W) is q, or q+1 when rem > 0
		if rem > 0 {
			q++
		} else {
			rem = uint64(p.window)
		}
		if q <= uint64(p.capacity) {
			*d = Decision{Allowed: true, Limit: p.capacity, Remaining: p.capacity - int64(q)}
			d.ResetAfter = dur(dt) // ceil(D·L/L) = dt + ceil(x/L)
			if c.x > 0 {
				d.ResetAfter++
			}
			// bucketWait(D·L, avail+1): (C−avail−1)·W = (q−1)·W < D·L, and
			// D·L − (q−1)·W = rem, in (0, W].
			d.NextAfter = dur((int64(rem) + p.limit - 1) / p.limit)
			return
		}
	}
	p.bucketReportExact(d, c, t, n, ok)
}

// bucketReportExact is bucketReport in 128-bit arithmetic, for any state.
func (p *params) bucketReportExact(d *Decision, c cell, t, n int64, ok bool) {
	dl := p.deficit(c, t)
	*d = Decision{Allowed: ok, Limit: p.capacity}
	if !ok {
		d.RetryAfter = dur(p.bucketWait(dl, n))
	}
	// ceil(D·L/W) <= C, unless the clock went back past the state: then the
	// bucket is more than empty, and the extra is waited out like any deficit.
	// (Years back at the highest rates, D·L/W passes 2^64: not divided then.)
	var avail int64
	if cw := mul(p.capacity, p.window); !cw.less(dl) {
		avail = p.capacity - dl.divCeil(p.window)
	}
	d.Remaining = avail
	d.ResetAfter = dur(dl.divCeil(p.limit))
	if avail < p.capacity {
		d.NextAfter = dur(p.bucketWait(dl, avail+1))
	}
}

// deficit returns D·L, where D = max(0, F − t) and F = c.t + c.x/L.
func (p *params) deficit(c cell, t int64) u128 {
	if c.t < t || (c.t == t && c.x == 0) {
		return u128{}
	}
	hi, lo := bits.Mul64(uint64(c.t-t), uint64(p.limit))
	lo, carry := bits.Add64(lo, uint64(c.x), 0)
	return u128{hi + carry, lo}
}

// advance returns the state after admitting cost n at t: F = max(F, t) + n·W/L.
func (p *params) advance(c cell, t, n int64) cell {
	c = p.refill(c, t)
	if n != 1 {
		return p.advanceBy(c, n)
	}
	return p.moveOn(c, p.emQ, p.emR)
}

// refill returns c, or the state of a full bucket at t when c is full by t.
func (p *params) refill(c cell, t int64) cell {
	if c.t < t || (c.t == t && c.x == 0) {
		return cell{t: t}
	}
	return c
}

// advanceBy returns c with F moved on by n·W/L.
func (p *params) advanceBy(c cell, n int64) cell {
	q, r := mul(n, p.window).divmod(p.limit)
	return p.moveOn(c, q, r)
}

// moveOn returns c with F moved on by q + r/L ns (0 <= r < L).
func (p *params) moveOn(c cell, q, r int64) cell {
	r += int64(c.x)
	if r >= p.limit {
		r -= p.limit
		q++
	}
	c.t += q
	c.x = uint32(r)
	return c
}

// retreat returns the state with F = c.t + c.x/L moved back by g/L (g is
// in units of 1/L ns), as advance moves it on; the callers keep g below
// the deficit (F − t)·L, so F stays after t.
func (p *params) retreat(c cell, g u128) cell {
	q, r := g.divmod(p.limit)
	c.t -= q
	x := int64(c.x) - r
	if x < 0 {
		x += p.limit
		c.t--
	}
	c.x = uint32(x)
	return c
}

// bucketWait returns the shortest wait after which m units are available,
// given dl = D·L: C − ceil((D−w)·L/W) >= m ⇔ w·L >= D·L − (C−m)·W.
func (p *params) bucketWait(dl u128, m int64) int64 {
	room := mul(p.capacity-m, p.window)
	if !room.less(dl) {
		return 0
	}
	return dl.sub(room).divCeil(p.limit)
}

// bucketGiveBack gives back at t cost n taken by a Take w ns before t,
// whose decision said the bucket would be full a = r + w ns after it (its
// ResetAfter) with q units in use (C less its Remaining): see bucketSeen
// and [GiveBacker.GiveBack].
//
// F moves back by what the Take's own units have not refilled by t, had
// they been the whole deficit: n·W/L − w (in D·L units, n·W − w·L), never
// more than the Take's decision allows (q·W, a·L: both at least n·W for
// the Take's own decision), nor before t (a full bucket, an empty meter).
// Whatever came before the Take (and whatever was given back of it
// since), its units were taken from t − w on, so no more of them than
// that can still be unrefilled.
func (p *params) bucketGiveBack(c cell, t, n, r, w, q int64) (cell, bool) {
	if r <= 0 || q <= 0 {
		return c, false // the Take's deficit has refilled
	}
	dl := p.deficit(c, t)
	if dl == (u128{}) {
		return c, false // full
	}
	own := mul(min(n, q), p.window)
	if aL := mul(r+w, p.limit); aL.less(own) {
		own = aL
	}
	wl := mul(w, p.limit)
	if !wl.less(own) {
		return c, false // its own units have refilled
	}
	g := own.sub(wl)
	if dl.less(g) {
		g = dl
	}
	if g == dl {
		return cell{t: t}, true
	}
	return p.retreat(c, g), true
}
