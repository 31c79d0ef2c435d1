package algorithms

// A cell is the fixed-size state of one key under the kinds that need no
// more than an instant and two counts (every kind but sliding_log and
// sliding_buckets). Counts fit in 32 bits because Limit <= MaxLimit < 2^32.
//
//	fixed_window:   t = window index k, x = count
//	sliding_window: t = window index k, x = count of window k−1, y = count of window k
//	token_bucket, leaky_bucket: t + x/L = the instant the bucket is full (GCRA's TAT)
//	leaky_queue:    t + x/L = the instant the queue is free
type cell struct {
	t    int64
	x, y uint32
}

// freshCell returns the state of a key never seen, at instant t.
func (p *params) freshCell(t int64) cell {
	switch p.kind {
	case FixedWindow, SlidingWindow:
		return cell{t: floorDiv(t, p.window) - 2}
	}
	return cell{t: t}
}

// decideCell decides a request of cost n at instant t on state c and returns
// the Decision and the state after it (c itself when denied, or when consume
// is false: then the Decision says whether the request would be admitted and
// describes the state as it is). It is a pure function of its arguments.
func (p *params) decideCell(c cell, t, n int64, consume bool) (Decision, cell) {
	switch p.kind {
	case FixedWindow:
		return p.fixedWindow(c, t, n, consume)
	case SlidingWindow:
		return p.slidingWindow(c, t, n, consume)
	case LeakyQueue:
		return p.leakyQueue(c, t, n, consume)
	}
	return p.tokenBucket(c, t, n, consume)
}

// idleCell reports whether c is back to the full allowance at t, so that
// forgetting it changes no decision.
func (p *params) idleCell(c cell, t int64) bool {
	switch p.kind {
	case FixedWindow:
		return c.t < floorDiv(t, p.window) || c.x == 0
	case SlidingWindow:
		k := floorDiv(t, p.window)
		return c.t < k-1 || (c.t == k-1 && c.y == 0) || (c.x == 0 && c.y == 0)
	}
	return c.t < t || (c.t == t && c.x == 0)
}

// usedCell returns how much of the capacity c has in use at t.
func (p *params) usedCell(c cell, t int64) int64 {
	if p.idleCell(c, t) {
		return 0
	}
	d, _ := p.decideCell(c, t, 1, false)
	return p.capacity - d.Remaining
}

// late returns the offset to add to a decision taken at an instant the state
// has already passed: time never runs backwards for a key, so a request at
// an instant before the key's current window is decided at that window's start.
func (p *params) late(c cell, t int64) int64 {
	switch p.kind {
	case FixedWindow, SlidingWindow:
		if k := floorDiv(t, p.window); c.t > k {
			return c.t*p.window - t
		}
	}
	return 0
}
