package algorithms

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
	if t-c.t >= p.window {
		*c = cell{t: p.windowStart(t)}
	}
	end := c.t + p.window - t // until the next window
	*d = Decision{Limit: p.limit}
	count := int64(c.x)
	if count+n <= p.limit {
		d.Allowed = true
		if consume {
			count += n
			c.x = uint32(count)
		}
	} else {
		d.RetryAfter = dur(end)
	}
	d.Remaining = p.limit - count
	if count > 0 {
		d.ResetAfter = dur(end)
		d.NextAfter = dur(end)
	}
}
