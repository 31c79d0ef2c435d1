package algorithms

// fixedWindow: count of window k = floor(t/W); allowed when count+n <= L.
func (p *params) fixedWindow(c cell, t, n int64, consume bool) (Decision, cell) {
	k := floorDiv(t, p.window)
	if c.t != k {
		c = cell{t: k}
	}
	end := (k+1)*p.window - t // until the next window
	d := Decision{Limit: p.limit}
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
	return d, c
}
