package algorithms

// A cell is the fixed-size state of one key under the kinds that need no
// more than an instant and two counts (every kind but sliding_log and
// sliding_buckets). Counts fit in 32 bits because every limit a request is
// counted at, its Spec's or one its check is judged at ([Check.Limit]:
// above the Spec's too, for the window kinds), is at most MaxLimit < 2^32;
// a window's count may be above its Spec's limit.
//
//	fixed_window:   t = start of the window, x = count
//	sliding_window: t = start of the current window, x = count of the previous window, y = of the current one
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
		return cell{t: p.windowStart(t) - 2*p.window}
	}
	return cell{t: t}
}

// windowStart returns the start of the window of t: floor(t/W)·W.
func (p *params) windowStart(t int64) int64 {
	return floorDiv(t, p.window) * p.window
}

// decideCell decides a request of cost n at instant t on state *c: it writes
// the Decision to *d and moves *c to the state after it (left as it is when
// denied, or when consume is false: then the Decision says whether the
// request would be admitted and describes the state as it is). It reads and
// writes nothing else. (Pointers rather than values: the results are 72
// bytes, and copying them was a fifth of the cost of a decision.)
func (p *params) decideCell(c *cell, t, n int64, consume bool, d *Decision) {
	switch p.kind {
	case FixedWindow:
		p.fixedWindow(c, t, n, consume, d)
	case SlidingWindow:
		p.slidingWindow(c, t, n, consume, d)
	case LeakyQueue:
		p.leakyQueue(c, t, n, consume, d)
	default:
		p.tokenBucket(c, t, n, consume, d)
	}
}

// chargeCell moves *c to the state after a request of cost n at instant
// t is counted, whether or not it fits: a check that follows a denied one
// on its key in one Take is decided as if that one had been admitted
// (see [Decision.RetryAfter]). The counts stay below 2^32: a key's count
// is at most MaxLimit (a request is counted only when it fits below the
// limit it is judged at, at most MaxLimit), and the checks of one key in
// one Take cost at most MaxLimit together (ValidateChecks: at most the
// limit the last is judged at), so at most 2·MaxLimit < 2^32 here.
func (p *params) chargeCell(c *cell, t, n int64) {
	switch p.kind {
	case FixedWindow:
		// Counted where fixedWindow decides: in the key's window when the
		// clock went back before it.
		*c, _ = p.fixedAdmit(*c, max(t, c.t), 0, false)
		c.x += uint32(n)
	case SlidingWindow:
		*c, _, _ = p.slidingAdmit(*c, max(t, c.t), 0, false)
		c.y += uint32(n)
	default:
		*c = p.advance(*c, t, n)
	}
}

// idleCell reports whether c is back to the full allowance at t, so that
// forgetting it changes no decision. A window kind's key whose counts are
// all 0 (given back) but whose window starts after t (the clock went back)
// is not idle: a request at t is decided in that window, a fresh key's in
// the window of t.
func (p *params) idleCell(c cell, t int64) bool {
	switch p.kind {
	case FixedWindow:
		return (c.x == 0 && c.t <= t) || t-c.t >= p.window
	case SlidingWindow:
		return (c.x == 0 && c.y == 0 && c.t <= t) || t-c.t >= 2*p.window || (t-c.t >= p.window && c.y == 0)
	}
	return c.t < t || (c.t == t && c.x == 0)
}

// usedCell returns how much of the capacity c has in use at t. For the
// window kinds that is all their count weighs, which may be more than the
// capacity: checks judged at a limit above the Spec's ([Check.Limit]) may
// have counted past it (see MemoryStore's eviction).
func (p *params) usedCell(c cell, t int64) int64 {
	if p.idleCell(c, t) {
		return 0
	}
	switch p.kind {
	case FixedWindow:
		c, _ = p.fixedAdmit(c, max(t, c.t), 0, false) // moved to the window of t
		return int64(c.x)
	case SlidingWindow:
		_, _, avail := p.slidingAdmit(c, max(t, c.t), 0, false)
		return p.limit - avail // curr + ceil(prev·(W−e)/W)
	}
	var d Decision
	p.decideCell(&c, t, 1, false, &d)
	return p.capacity - d.Remaining
}

// deniedCell corrects *d, the Decision of a denied request of cost n
// decided at t on a cell kind's state c, after earlier checks of its Take
// on its key, which cost ahead > 0 and are counted in c as if admitted:
// its RetryAfter must be the wait of one check of their combined cost on
// the state before them (see [Decision.RetryAfter]). For sliding_window,
// the wait on c is not that (see slidingRepeat); for fixed_window, it is
// (the next window, or none at all); the buckets and the queue reckon it
// themselves, on c. c may count more than p.limit (the earlier checks, or
// a limit of its own below the one its count was kept at, or a Spec's
// limit below the raised one a count was kept at: [Check.Limit]), which
// the single-check reports (fixedReport, slidingReport) allow for.
func (p *params) deniedCell(d *Decision, c cell, t, ahead, n int64) {
	if p.kind == SlidingWindow {
		p.slidingRepeat(d, c, t, ahead, n)
	}
}
