package algorithms

import (
	"context"
	"errors"
	"fmt"
)

var _ Peeker = (*MemoryStore)(nil)

// Peek implements [Peeker]: it writes into dst what a Take of each check
// alone would decide at one instant, and consumes nothing. Every check is
// validated first (the errors of Take: a *SpecError, a *CostError, checks
// of one key past what it can ever admit at once included). Each
// check is decided under its shard's lock on its key's state as it is,
// read and never written: a sliding_log is not pruned, a sliding_buckets
// ring not rolled (a peek far ahead of the key's newest instant would
// otherwise move that instant, which decides a later Take at an earlier
// instant: see "Time that goes back"), no sweep runs and no key or Spec
// storage is made. A key the store does not hold is decided as Take
// would decide a new one: fresh, at the latest instant from which keys its
// shard dropped were idle if that is later. It does not allocate for a key the store holds.
func (s *MemoryStore) Peek(ctx context.Context, dst []Decision, checks []Check) error {
	if len(dst) != len(checks) {
		return fmt.Errorf("algorithms: Peek: %d decisions for %d checks", len(dst), len(checks))
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	if err := ValidateChecks(checks); err != nil {
		return err
	}
	if len(checks) == 0 {
		return nil
	}
	t := s.now()
	for i := range checks {
		s.peekOne(&dst[i], &checks[i], t)
	}
	return nil
}

// peekOne writes into *d what a Take of c, a valid check, alone at t would
// decide, without changing anything.
func (s *MemoryStore) peekOne(d *Decision, c *Check, t int64) {
	h := s.hash(c.Key)
	sh := &s.shards[h&s.mask]
	n := c.cost()
	tb := sh.lookup(&c.Spec)
	sh.mu.Lock()
	if tb != nil {
		tb = sh.liveOrNil(tb)
	}
	if tb == nil {
		// No key of c's Spec in the shard: a new key, on params of its own
		// (the shard gets no table for it), made without the lock.
		dropped := sh.dropped
		sh.mu.Unlock()
		p := newParams(c.Judged())
		p.peekFresh(d, t, dropped, n)
		return
	}
	p := &tb.p
	var jp params
	if c.Limit != 0 {
		// Judged at a limit of its own, on its Spec's state.
		jp = p.judged(c.Limit)
		p = &jp
	}
	switch {
	case tb.logs != nil:
		i, held := tb.logs.kt.find(h)
		if !held {
			break
		}
		var buf [1]logEvent
		lg := tb.logs.load(i, &buf)
		tl := lg.latest(t)
		v := lg.view(p, tl)
		*d = v.decide(p, tl, n, false)
		sh.mu.Unlock()
		if tl > t {
			*d = d.later(tl - t)
		}
		return
	case tb.rings != nil:
		i, held := tb.rings.kt.find(h)
		if !held {
			break
		}
		bk := tb.rings.load(i)
		tl := bk.latest(p, t)
		*d = bk.view(p, tl).decide(&bk, p, tl, n, false)
		sh.mu.Unlock()
		if tl > t {
			*d = d.later(tl - t)
		}
		return
	default:
		if i, held := tb.cells.find(h); held {
			cl := tb.cells.cs[i]
			sh.mu.Unlock()
			p.decideCell(&cl, t, n, false, d)
			p.peekDelay(d)
			return
		}
	}
	dropped := sh.dropped
	sh.mu.Unlock()
	p.peekFresh(d, t, dropped, n)
}

// peekFresh writes into *d what a Take of cost n at t would decide on a key
// the store does not hold, whose shard's dropped keys were idle from
// dropped (shard.dropped): as
// takeCell and pending.load decide a new key, at max(t, dropped).
func (p *params) peekFresh(d *Decision, t, dropped, n int64) {
	tn := max(t, dropped)
	switch p.kind {
	case SlidingLog:
		var lg slidingLog
		*d = lg.decide(p, tn, n, false)
	case SlidingBuckets:
		r := freshRing(p, tn)
		*d = r.decide(p, tn, n, false)
	default:
		cl := p.freshCell(tn)
		p.decideCell(&cl, tn, n, false, d)
	}
	if tn > t {
		*d = d.later(tn - t)
	}
	p.peekDelay(d)
}

// peekDelay sets the Delay of an admitted leaky_queue decision made
// without consuming, which decideCell leaves 0: the wait of its request,
// which is the time until the queue is free, its ResetAfter.
func (p *params) peekDelay(d *Decision) {
	if p.kind == LeakyQueue && d.Allowed {
		d.Delay = d.ResetAfter
	}
}

// view returns s as prune(p, t) would leave it, without changing s: the
// copy shares s's events and starts past those that have left the window
// at t. A call that logs nothing (a peek, a denied Take, a give-back)
// decides on a view: pruning at t, which may be later than the newest
// logged instant, would forget events that a request decided at an
// earlier instant (its clock read before the call's, or behind it) still
// counts. A log forgets only when it logs, at its newest instant from
// then on (or, in a sweep, at the newest it has: see slidingLog.used).
func (s *slidingLog) view(p *params, t int64) slidingLog {
	v := *s
	for v.n > 0 && v.ev[v.head].t < t-p.window {
		v.sum -= v.ev[v.head].n
		v.n--
		if v.head++; v.head == len(v.ev) {
			v.head = 0
		}
	}
	return v
}

// Peek decides n units for key now without consuming anything: what AllowN
// would decide, as [Peeker.Peek] reports it (a leaky_queue's Delay
// included). n is checked as AllowN checks it (0 is a *CostError). A store
// that is not a Peeker fails with an error wrapping errors.ErrUnsupported.
func (l *Limiter) Peek(ctx context.Context, key string, n int64) (Decision, error) {
	if err := l.checkCost(n); err != nil {
		return Decision{}, err
	}
	pk, ok := l.store.(Peeker)
	if !ok {
		return Decision{}, fmt.Errorf("algorithms: Limiter.Peek: the store (%T) is not a Peeker: %w", l.store, errors.ErrUnsupported)
	}
	var out [1]Decision
	if err := pk.Peek(ctx, out[:], []Check{{Spec: l.spec, Key: key, Cost: n}}); err != nil {
		return Decision{}, err
	}
	return out[0], nil
}
