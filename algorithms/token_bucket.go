package algorithms

import "math/bits"

// tokenBucket decides token_bucket and leaky_bucket, which are the same
// machine seen from two sides (tokens = capacity − level). The state is the
// instant F = c.t + c.x/L at which the bucket is full (GCRA's theoretical
// arrival time). With D = max(0, F − t), the bucket holds C − D·L/W tokens,
// so the whole units available are C − ceil(D·L/W); a request of cost n
// moves F to max(F, t) + n·W/L.
func (p *params) tokenBucket(c *cell, t, n int64, consume bool, d *Decision) {
	var ok bool
	*c, ok = p.bucketAdmit(*c, t, n, consume)
	p.bucketReport(d, *c, t, n, ok)
}

// bucketAdmit reports whether n tokens are there at t in state c, and
// returns the state after taking them when they are and consume is true,
// c otherwise. (Values, as fixedAdmit's.)
func (p *params) bucketAdmit(c cell, t, n int64, consume bool) (cell, bool) {
	// n tokens are there when C − ceil(D·L/W) >= n, that is D·L <= (C−n)·W:
	// always when the bucket is full (D = 0, n <= C). Whether it is full is
	// tested once, for deficit and for advance.
	full := c.t < t || (c.t == t && c.x == 0)
	if !full && mul(p.capacity-n, p.window).less(mul(c.t-t, p.limit).add64(int64(c.x))) {
		return c, false
	}
	if !consume {
		return c, true
	}
	// advance, in line for a cost of 1.
	if full {
		c = cell{t: t}
	}
	if n != 1 {
		return p.advanceBy(c, n), true
	}
	return p.moveOn(c, p.emQ, p.emR), true
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
	if ok && p.emR == 0 && dt < p.capacity*p.emQ {
		// R = dt + ceil(x/L) <= C·emQ (C·emQ = C·W/L <= MaxWindow).
		p.bucketReportWhole(d, c, t)
		return
	}
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

// bucketAdmitQuick is bucketAdmit consuming, in line, for a bucket whose
// window is a whole number of nanoseconds a unit (emR = 0: W = emQ·L; the
// caller tells). n units are there when D·L = dt·L + x <= (C−n)·W =
// (C−n)·emQ·L, that is (0 <= x < L) when dt < (C−n)·emQ, or dt =
// (C−n)·emQ and x = 0; taking them moves F on by n·emQ exactly. (Within
// C·W/L <= MaxWindow: Spec.Validate.)
func (p *params) bucketAdmitQuick(c cell, t, n int64) (cell, bool) {
	if c.t < t || (c.t == t && c.x == 0) {
		return cell{t: t + n*p.emQ}, true // full
	}
	if dt, room := c.t-t, (p.capacity-n)*p.emQ; dt > room || (dt == room && c.x > 0) {
		return c, false
	}
	c.t += n * p.emQ
	return c, true
}

// bucketReportWhole is bucketReport, in line, for an admitted request on a
// bucket whose window is a whole number of nanoseconds a unit (emR = 0: W
// = emQ·L) that is not full at t (c.t > t, or c.t = t and x > 0) and has
// at most C units in use (R <= C·emQ below), as after any admission.
//
// With R = ceil(D·L/L) = dt + ceil(x/L) (ResetAfter), ceil(D·L/W) =
// ceil((dt + x/L)/emQ) is ceil(R/emQ) = u+1, where R−1 = u·emQ + r, 0 <= r
// < emQ; and the wait for one unit more, ceil((D·L − u·W)/L) (see
// bucketReport), is R − u·emQ = r+1: one 64-bit division, none by L. It
// sets each field of *d once, as fixedReport does.
func (p *params) bucketReportWhole(d *Decision, c cell, t int64) {
	reset := c.t - t
	if c.x > 0 {
		reset++
	}
	u, r := uint64(reset-1)/uint64(p.emQ), uint64(reset-1)%uint64(p.emQ)
	d.Allowed, d.Limit, d.Remaining = true, p.capacity, p.capacity-1-int64(u)
	d.RetryAfter, d.ResetAfter, d.NextAfter, d.Delay = 0, dur(reset), dur(int64(r)+1), 0
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
// ResetAfter) with q units in use (C less its Remaining), nt being the
// key's live note of its latest give-back (nil for none): see bucketSeen,
// bucketNote and [GiveBacker.GiveBack]. It returns the state after and the
// units given back (D·L), zero for none.
//
// The Take's own deficit τ (in D·L units, at its instant t − w) is known
// to the ns by its ResetAfter, (a−1)·L < τ <= a·L, and to the unit by its
// Remaining, (q−1)·W < τ <= q·W: τ lies in (lo, hi], shorter than a ns and
// than a unit. The state's deficit at t − w, x = dl + w·L, is τ plus the
// costs of the requests after the Take (m·W, m whole), when the Take was
// reckoned exactly and the bucket was not full between them: then τ is
// the one value x − m·W in (lo, hi]. Where there is none (the reckoning is
// off, or the key changed otherwise), τ is taken to be lo + 1, the least
// deficit a state can hold in (lo, hi]: no step rounds towards giving
// back more. The note then lowers τ to what still stands of it
// (bucketLowerDeficit), and F moves back by min(n·W/L, τ − w·L, F − t),
// so never before t (a full bucket, an empty meter).
func (p *params) bucketGiveBack(c cell, t, n, r, w, q int64, nt *bucketNote) (cell, u128) {
	if r <= 0 || q <= 0 {
		return c, u128{} // the Take's deficit has refilled
	}
	dl := p.deficit(c, t)
	if dl == (u128{}) {
		return c, u128{} // full
	}
	a := r + w
	hi, lo := mul(a, p.limit), mul(a-1, p.limit)
	if qw := mul(q, p.window); qw.less(hi) {
		hi = qw
	}
	if qw := mul(q-1, p.window); lo.less(qw) {
		lo = qw
	}
	wl := mul(w, p.limit)
	tau := lo.add64(1)
	// When τ is some x − m·W, m < C: each request after the Take was
	// admitted with the deficit at most C·W, and τ has not refilled at t.
	// So a larger x − hi has none, and the quotient stays small.
	if x := dl.add(wl); !hi.less(x) {
		if tau.less(x) {
			tau = x // m = 0
		}
	} else if d := x.sub(hi); !mul(p.capacity, p.window).less(d) {
		// x − k·W > hi − W, at least 0 unless the decision is not the
		// Take's (an admitted Take's deficit is at least a unit's).
		if kw := mul(d.divCeil(p.window), p.window); !x.less(kw) {
			if y := x.sub(kw); lo.less(y) {
				tau = y
			}
		}
	}
	if hi.less(tau) {
		tau = hi // lo >= hi: a decision that is not the Take's
	}
	tau = p.bucketLowerDeficit(tau, t, n, w, nt)
	if !wl.less(tau) {
		return c, u128{}
	}
	g := tau.sub(wl)
	if ng := mul(n, p.window); ng.less(g) {
		g = ng
	}
	if dl.less(g) {
		g = dl
	}
	if g == dl {
		return cell{t: t}, g
	}
	return p.retreat(c, g), g
}
