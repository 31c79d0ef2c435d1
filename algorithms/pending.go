package algorithms

// pending is one check of a Take between deciding and committing.
// The memory store's shard locks must be held while it is used.
type pending struct {
	tb     *table
	h      uint64
	n      int64
	lim    int64 // the limit the check is judged at ([Check.Limit]), or 0
	dup    int   // index of an earlier check on the same key and spec, or -1
	ahead  int64 // the cost of the earlier checks on the same key and spec
	exists bool  // the key is held by the store
	off    int64 // how far the key's state is ahead of the Take's instant
	// The state the check is decided on; for a repeated key, a copy that
	// includes the earlier checks' consumption.
	c  cell
	nc cell // the state after the check (cell kinds)
	// lv is the log decided on (sliding_log): the key's log as pruned at
	// t+off, without pruning it (a check that logs nothing forgets no
	// event: see slidingLog.view); for a repeated key, a copy with the
	// earlier checks' units. The key's log is changed only by commit.
	lv logView
	bk slidingBuckets // the key's ring (sliding_buckets), changed only by commit
	// bv is the ring decided on: bk as rolled to t+off, without rolling
	// it (see bucketsView); for a repeated key, bk is a copy with the
	// earlier checks' units.
	bv bucketsView
	d  Decision
}

func (op *pending) init(tb *table, h uint64, n, lim int64) {
	*op = pending{tb: tb, h: h, n: n, lim: lim, dup: -1}
}

// load reads the key's state from the table, or a fresh state at
// max(t, dropped) when the table does not hold the key (dropped: the latest
// instant from which keys its shard dropped were idle, shard.dropped).
func (op *pending) load(t, dropped int64) {
	p := &op.tb.p
	tn := max(t, dropped)
	switch p.kind {
	case SlidingLog:
		var i int
		if i, op.exists = op.tb.logs.kt.find(op.h); op.exists {
			op.lv = op.tb.logs.loadView(i)
			op.off = op.lv.latest(t) - t
		} else {
			op.lv = logView{}
			op.off = tn - t
		}
		op.lv = op.lv.view(p, t+op.off)
	case SlidingBuckets:
		var i int
		if i, op.exists = op.tb.rings.kt.find(op.h); op.exists {
			op.bk = op.tb.rings.load(i)
		} else {
			op.bk = freshRing(p, tn)
		}
		op.off = op.bk.latest(p, t) - t
		if !op.exists {
			op.off = tn - t
		}
		op.bv = op.bk.view(p, t+op.off)
	default:
		if ptr := op.tb.cells.get(op.h); ptr != nil {
			op.c, op.exists = *ptr, true
		} else {
			op.c = p.freshCell(tn)
			op.off = tn - t
		}
	}
}

// follow sets op's state to the state after prev, an earlier check of the
// same Take on the same key and spec, as if prev had been admitted (it
// was, or the Take is denied anyway, and op is decided as the Decision
// documentation says). op is decided at prev's instant t+prev.off: prev
// was decided on its key's log or ring as pruned or rolled there (a view;
// op decides on a copy of it with prev's units, recorded there), so
// nothing moves the key's instant further or leaves the window. The key's
// own state is changed only by commit.
func (op *pending) follow(prev *pending, t int64) {
	p := &op.tb.p
	op.exists, op.off, op.ahead = prev.exists, prev.off, prev.ahead+prev.n
	switch p.kind {
	case SlidingLog:
		op.lv = prev.lv.with(p, t+prev.off, prev.n)
	case SlidingBuckets:
		bk := prev.bk.clone()
		bk.roll(p, t+prev.off)
		bk.commit(p, prev.n)
		op.bk, op.bv = *bk, bk.view(p, t+prev.off)
	default:
		op.c = prev.nc
		if !prev.d.Allowed {
			op.c = prev.c
			p.chargeCell(&op.c, t+prev.off, prev.n)
		}
	}
}

// alone decides ops[i] at t again without consuming, on its key's state
// as it is: for a check after another on the same key and spec, the state
// the first of them was decided on. A denied Take's checks that passed
// report this, as if each had been decided alone. It points the dup of
// ops[i] and of the checks it passes on the way there at that first check
// (the chain of dup is not used after: only alone follows it then), so
// that a key named many times is followed to its first check along each
// check once, not along its whole chain each time (TestManyChecksLinear).
func alone(ops []pending, i int, t int64) {
	op := &ops[i]
	if op.dup >= 0 {
		root := op.dup
		for ops[root].dup >= 0 {
			root = ops[root].dup
		}
		for j := i; ops[j].dup != root; {
			j, ops[j].dup = ops[j].dup, root
		}
		r := &ops[root]
		op.c, op.lv, op.bk, op.bv, op.off = r.c, r.lv, r.bk, r.bv, r.off
	}
	op.decide(t, false)
}

// decide decides op at t, judged at op.lim when it is set; with consume
// false it only reports what the decision would be, describing the state
// as it is.
func (op *pending) decide(t int64, consume bool) {
	p := &op.tb.p
	var jp params
	if op.lim != 0 {
		jp = p.judged(op.lim)
		p = &jp
	}
	tl := t + op.off
	switch p.kind {
	case SlidingLog:
		op.d = op.lv.decide(p, tl, op.n, consume)
	case SlidingBuckets:
		op.d = op.bv.decide(&op.bk, p, tl, op.n, consume)
	default:
		op.nc = op.c
		p.decideCell(&op.nc, tl, op.n, consume, &op.d)
		if op.ahead > 0 && !op.d.Allowed {
			p.deniedCell(&op.d, op.c, tl, op.ahead, op.n)
		}
	}
	if op.off > 0 {
		op.d = op.d.later(op.off)
	}
}

// later returns d as seen off ns before the instant it was decided at.
func (d Decision) later(off int64) Decision {
	if !d.Allowed {
		d.RetryAfter += dur(off)
	}
	if d.ResetAfter > 0 {
		d.ResetAfter += dur(off)
	}
	if d.NextAfter > 0 {
		d.NextAfter += dur(off)
	}
	if d.Delay > 0 {
		d.Delay += dur(off)
	}
	return d
}
