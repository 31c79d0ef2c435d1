package algorithms

import "time"

// fixedWindow: count of window k = floor(t/W); allowed when count+n <= L.
// The state holds the window's start, so a request in the same window as the
// last one costs no division.
func (p *params) fixedWindow(c *cell, t, n int64, consume bool, d *Decision) {
	if t < c.t {
		// The clock went back: decide at the start of the key's window.
		back := c.t - t
		p.fixedWindow(c, c.t, n, consume, d)
		*d = d.later(back)
		return
	}
	var ok bool
	*c, ok = p.fixedAdmit(*c, t, n, consume)
	p.fixedReport(d, *c, t, ok)
}

// fixedAdmit returns c moved to the window of t (t >= c.t) and reports
// whether n units fit in it; when they do and consume is true, it counts
// them in the state it returns. (Values rather than pointers: the state
// stays in registers, where a caller's copy in memory, written a field at
// a time, would be read back whole before the write reached it.)
func (p *params) fixedAdmit(c cell, t, n int64, consume bool) (cell, bool) {
	if t-c.t >= p.window {
		c = cell{t: p.windowStart(t)}
	}
	if int64(c.x)+n > p.limit {
		return c, false
	}
	if consume {
		c.x += uint32(n)
	}
	return c, true
}

// fixedReport writes to *d the Decision of a request decided at t with
// outcome ok, given the state c after fixedAdmit. The count may be above
// the limit: a check judged at a limit of its own decides on the count
// kept under its Spec's, or a check at the Spec's limit on a count that
// checks judged at a higher one took past it ([Check.Limit]).
//
// It sets each field of *d once, with a store of its own size, rather than
// through a composite literal, which the compiler zeroes with 16-byte
// stores first: TakeOne, into whose result it is inlined, reads the fields
// back one by one (about 1.3 ns less a decision, measured).
func (p *params) fixedReport(d *Decision, c cell, t int64, ok bool) {
	end := dur(c.t + p.window - t) // until the next window
	count := int64(c.x)
	var retry, reset time.Duration
	if !ok {
		retry = end
	}
	if count > 0 {
		reset = end
	}
	d.Allowed, d.Limit, d.Remaining = ok, p.limit, max(p.limit-count, 0)
	d.RetryAfter, d.ResetAfter, d.NextAfter, d.Delay = retry, reset, reset, 0
}

// windowOf returns the index of the window of length w whose end is
// nearest to e (a tie goes to the later one): the window a Take was
// counted in, reckoned from the instant e its ResetAfter pointed to.
func windowOf(e, w int64) int64 {
	return floorDiv(e+w/2, w) - 1
}

// fixedGiveBack gives back at t cost n counted by a Take whose window was
// to end at t + r (see [GiveBacker.GiveBack]): the count drops by n, never
// below 0, when that window is still the key's current one.
func (p *params) fixedGiveBack(c cell, t, n, r int64) (cell, bool) {
	if c.x == 0 || t-c.t >= p.window {
		return c, false // the key's window has ended: its count no longer counts
	}
	if windowOf(t+r, p.window)*p.window != c.t {
		return c, false
	}
	c.x -= uint32(min(n, int64(c.x)))
	return c, true
}
