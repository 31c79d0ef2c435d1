package algorithms

import (
	"context"
	"time"
)

// reckoned returns ResetAfter − waited, the time from the give-back's
// instant to the one a Take's decision said its key would be back to its
// full allowance, within ±4·MaxWindow: every state a kind keeps is
// shorter than that, so the bound changes no outcome and keeps the
// instants it makes within int64.
func reckoned(resetAfter, waited time.Duration) int64 {
	const bound = 4 * int64(MaxWindow)
	r := int64(resetAfter)
	switch {
	case r > bound:
		r = bound
	case r < -bound:
		r = -bound
	}
	return max(r-min(int64(waited), 2*bound), -bound)
}

// bucketSeen returns what a bucket's give-back knows of its Take besides
// r = reckoned(d.ResetAfter, waited), from the Take's decision d: w, the
// part of waited r took off (r + w is the bounded ResetAfter when r > 0),
// and q, the units the Take left in use, C − Remaining within [0, C] (an
// admitted Take leaves at least 1 in use).
func bucketSeen(d *Decision, waited time.Duration, capacity int64) (w, q int64) {
	const bound = 4 * int64(MaxWindow)
	return min(int64(waited), 2*bound), capacity - min(max(d.Remaining, 0), capacity)
}

// GiveBack implements [GiveBacker]: it gives back the units of the checks of
// an admitted Take, last first, by the rules of [GiveBacker.GiveBack], and
// then reports what a Take of the same checks at the give-back's instant
// would without consuming. The give-back of each key and the look at the
// keys take their shards' locks apart: a Take between them is counted.
func (s *MemoryStore) GiveBack(ctx context.Context, dst []Refunded, checks []Check, ds []Decision, waited time.Duration) error {
	if err := giveArgs("GiveBack", dst, checks, ds, waited); err != nil {
		return err
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	for i := range checks {
		if err := checks[i].Validate(); err != nil {
			return err
		}
	}
	admitted := allAllowed(ds) // a denied Take consumed nothing: nothing to give back
	t := s.now()
	for i := range dst {
		dst[i].Given = false
	}
	for i := len(checks) - 1; i >= 0 && admitted; i-- {
		dst[i].Given = s.giveOne(&checks[i], &ds[i], waited, t)
	}
	s.peek(dst, checks, t)
	return nil
}

// giveOne gives back at t the units of c, a valid check of an admitted
// Take whose decision was d, waited after it, and reports whether any
// came back.
func (s *MemoryStore) giveOne(c *Check, d *Decision, waited time.Duration, t int64) bool {
	if c.Spec.Algorithm == LeakyQueue {
		return s.refundOne(c, d.Delay, waited, t)
	}
	h := s.hash(c.Key)
	sh := &s.shards[h&s.mask]
	tb := sh.lookup(&c.Spec)
	if tb == nil {
		return false // no key of this spec is held
	}
	n := c.cost()
	r := reckoned(d.ResetAfter, waited)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if tb = sh.liveOrNil(tb); tb == nil {
		return false // dropped by a compaction: no key of this spec is held
	}
	p := &tb.p
	switch {
	case tb.logs != nil:
		lg := tb.logs[h]
		return lg != nil && lg.giveBack(p, t, n, t+r-p.window-1)
	case tb.bkts != nil:
		bk := tb.bkts[h]
		return bk != nil && bk.giveBack(p, t, n, t+r)
	}
	j, held := tb.cells.find(h)
	if !held {
		return false
	}
	cp := &tb.cells.slots[j].c
	var ok bool
	switch p.kind {
	case FixedWindow:
		*cp, ok = p.fixedGiveBack(*cp, t, n, r)
	case SlidingWindow:
		*cp, ok = p.slidingGiveBack(*cp, t, n, r)
	default:
		w, q := bucketSeen(d, waited, p.capacity)
		*cp, ok = p.bucketGiveBack(*cp, t, n, r, w, q)
	}
	return ok
}

// peek writes into dst's Decisions what a Take of checks, valid ones, at t
// would report without consuming: takeMany's steps for a denied Take.
func (s *MemoryStore) peek(dst []Refunded, checks []Check, t int64) {
	ops := make([]pending, len(checks))
	var order []uint8
	for i := range checks {
		h := s.hash(checks[i].Key)
		ops[i].h = h
		order = insertShard(order, uint8(h&s.mask))
	}
	for _, i := range order {
		s.shards[i].mu.Lock()
	}
	defer func() {
		for _, i := range order {
			s.shards[i].mu.Unlock()
		}
	}()
	for i := range checks {
		op := &ops[i]
		sh := &s.shards[op.h&s.mask]
		tb, _ := sh.table(&checks[i].Spec) // valid: no error
		op.tb, op.n, op.dup = tb, checks[i].cost(), -1
		for j := i - 1; j >= 0; j-- {
			if ops[j].tb == tb && ops[j].h == op.h {
				op.dup = j
				break
			}
		}
		if op.dup >= 0 {
			op.follow(&ops[op.dup], t)
		} else {
			op.load(t, sh.dropped)
		}
		op.decide(t, true)
	}
	for i := range ops {
		if ops[i].d.Allowed {
			alone(ops, i, t)
		}
		dst[i].Decision = ops[i].d
	}
}
