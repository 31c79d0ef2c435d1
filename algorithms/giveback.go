package algorithms

import (
	"context"
	"time"
)

// reckoned returns ResetAfter − waited, the time from the give-back's
// instant to the one a Take's decision said its key would be back to its
// full allowance, within ±4·MaxWindow, for the buckets: a bucket admits
// only while it is full less than MaxWindow after the instant it decides
// at, so the bound changes no outcome and keeps the instants it makes
// within int64. (The window kinds reckon from their key's latest instant:
// see reckonedFrom.)
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

// reckonedFrom returns ResetAfter − waited − off, the time from te = now +
// off (off >= 0) to the instant E a Take's decision said its key would be
// back to its full allowance, within ±4·MaxWindow, for a window kind whose
// key's latest instant is te: such a key decides, and counts its requests,
// at te when now is earlier (a clock that went back, by any amount: see
// "Time that goes back"), and its state spans less than 2·MaxWindow up to
// te, so the bound, reckoned from te rather than from now, changes no
// outcome.
func reckonedFrom(resetAfter, waited time.Duration, off int64) int64 {
	const bound = 4 * int64(MaxWindow)
	r := int64(resetAfter)
	for _, x := range [2]int64{int64(waited), off} { // both >= 0
		if r < x-bound {
			return -bound // r − x < −bound, without overflowing
		}
		r -= x
	}
	return min(r, bound)
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
//
// A key evicted at the [WithMaxKeys] bound while in use (not idle) and
// made again by later Takes is a new key, whose state counts only the
// requests since: a GiveBack of a Take from before the eviction gives it
// nothing, for the eviction forgot the Take's units once already, and
// taking them again from the requests since would admit that many more.
// The store keeps no trace of an evicted key but, in each shard, the hash
// and instant of the latest keys it evicted in use (an eighth of the
// shard's share of the bound, at least 64 and at most 256: 16 bytes each),
// and, for older ones, the latest instant of an eviction of each of a
// number of classes of key hashes (about one class for each 8 keys of the
// shard's share, at least 64: 8 bytes each). It gives nothing back to a
// key evicted after the Take's instant as the GiveBack reckons it, now −
// waited, while that eviction is among the latest; and, for a Take from
// before them (when more keys in use of its shard were evicted since than
// it holds), to a key whose class had an older eviction after that
// instant, whether the key itself was evicted or not, erring towards
// denying. So a key never evicted gets its units back as long as no more
// keys in use of its shard were evicted since its Take than the shard
// holds the latest of: at a bound of 64,000 keys (125 a shard) and a flood
// of 10,000 new keys a second, a give-back within 0.8 s of its Take (0.2 s
// at 40,000 a second); beyond, it gets nothing when one of the older
// evictions of its class fell after its Take (with C classes and N such
// evictions, about 1 − e^(−N/C)). The hash is the key's, which the key
// shares under every Spec: an eviction of the key under one Spec holds
// back a GiveBack under another. An eviction's instant is the evicting
// call's, or that of the latest Take decided on the shard before it when
// later (a Take on the key may read the clock after the evicting call did,
// and get the lock first). It tells the evicted key exactly when waited is
// more than the time since the Take read the clock (the middleware
// measures it from before its Take): a key evicted at the very instant the
// Take is reckoned at counts as evicted before it. A key dropped while
// idle (by a sweep, or evicted idle) needs no note: its Takes' units no
// longer count, and each kind's rule finds so on the key made again, which
// is decided no earlier than the instant the key was idle from. A key reset ([Resetter]) is not
// noted: a GiveBack of a Take from before the reset takes the units from
// the key's requests since, as the conformance suite (algotest) has every
// store do.
func (s *MemoryStore) GiveBack(ctx context.Context, dst []Refunded, checks []Check, ds []Decision, waited time.Duration) error {
	if err := giveArgs("GiveBack", dst, checks, ds, waited); err != nil {
		return err
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	if err := ValidateChecks(checks); err != nil {
		return err
	}
	admitted := allAllowed(ds) // a denied Take consumed nothing: nothing to give back
	t := s.now()
	for i := range dst {
		dst[i].Given = false
	}
	var own *ownNotes // a check alone notes nothing of its call
	if len(checks) > 1 {
		own = new(ownNotes)
	}
	for i := len(checks) - 1; i >= 0 && admitted; i-- {
		dst[i].Given = s.giveOne(&checks[i], &ds[i], waited, t, own)
	}
	s.peek(dst, checks, t)
	return nil
}

// ownNotes holds what one GiveBack call wrote to its bucket keys' notes:
// for each key, the note before the call's first give-back to it, and the
// one its latest give-back to it left. The checks of one Take on one key
// are given back last first, and the units of a later check were counted
// after those of an earlier one: giving them back moved none of the
// earlier check's units up, so its decision's deficit still stands as the
// note before the call has it. The store's lock is not held across the
// call: a note that is no longer the one the call left (another
// give-back came between) is taken as it stands.
type ownNotes struct {
	list []ownNote
	// at indexes list by key once it holds more than pairwiseChecks
	// notes (see pairwiseChecks), nil before.
	at map[dupKey]int
}

type ownNote struct {
	tb            *table
	h             uint64
	before, after bucketNote
	live          bool // before was live
}

// find returns the call's note of the key of hash h in tb, or nil. Each
// key has one at most.
func (o *ownNotes) find(tb *table, h uint64) *ownNote {
	if o.at != nil {
		if i, ok := o.at[dupKey{tb, h}]; ok {
			return &o.list[i]
		}
		return nil
	}
	for i := range o.list {
		if x := &o.list[i]; x.tb == tb && x.h == h {
			return x
		}
	}
	return nil
}

// lowering returns the note a give-back of the call to the key of hash h
// in tb lowers its Take's deficit by (nt, live when it is live at the
// call's instant, as the key holds it): the one before the call when the
// key's note is still the one the call left, else nt itself.
func (o *ownNotes) lowering(tb *table, h uint64, nt bucketNote, live bool) (bucketNote, bool) {
	if o != nil && live {
		if x := o.find(tb, h); x != nil && nt == x.after {
			return x.before, x.live
		}
	}
	return nt, live
}

// wrote records that a give-back of the call left nt as the note of the
// key of hash h in tb, whose note before was before (live or not).
func (o *ownNotes) wrote(tb *table, h uint64, before bucketNote, live bool, nt bucketNote) {
	if o == nil {
		return
	}
	if x := o.find(tb, h); x != nil {
		if x.after == before {
			x.after = nt // the call's own note, written over
		} else {
			*x = ownNote{tb, h, before, nt, live}
		}
		return
	}
	o.list = append(o.list, ownNote{tb, h, before, nt, live})
	switch {
	case o.at != nil:
		o.at[dupKey{tb, h}] = len(o.list) - 1
	case len(o.list) > pairwiseChecks:
		o.at = make(map[dupKey]int, 2*len(o.list))
		for i, x := range o.list {
			o.at[dupKey{x.tb, x.h}] = i
		}
	}
}

// giveOne gives back at t the units of c, a valid check of an admitted
// Take whose decision was d, waited after it, and reports whether any
// came back; own records the notes the call wrote (nil for a call of one
// check).
func (s *MemoryStore) giveOne(c *Check, d *Decision, waited time.Duration, t int64, own *ownNotes) bool {
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
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if tb = sh.liveOrNil(tb); tb == nil {
		return false // dropped by a compaction: no key of this spec is held
	}
	if sh.forgotSince(h, before(t, waited)) {
		return false // the key may be one made again since the Take
	}
	p := &tb.p
	// The window kinds reckon from their key's latest instant te, at which
	// they decide (and give back) when t is earlier; E − te is within the
	// bound of reckonedFrom, E − t need not be.
	switch {
	case tb.logs != nil:
		i, held := tb.logs.kt.find(h)
		if !held {
			return false
		}
		var buf [1]logEvent
		lg := tb.logs.load(i, &buf)
		te := lg.latest(t)
		r := reckonedFrom(d.ResetAfter, waited, te-t)
		if !lg.giveBack(p, te, n, te+r-p.window-1) {
			return false
		}
		tb.logs.store(i, &lg)
		return true
	case tb.rings != nil:
		i, held := tb.rings.kt.find(h)
		if !held {
			return false
		}
		bk := tb.rings.load(i)
		te := bk.latest(p, t)
		if !bk.giveBack(p, te, n, te+reckonedFrom(d.ResetAfter, waited, te-t)) {
			return false
		}
		tb.rings.store(i, &bk)
		return true
	}
	j, held := tb.cells.find(h)
	if !held {
		return false
	}
	cp := &tb.cells.cs[j]
	var ok bool
	switch p.kind {
	case FixedWindow, SlidingWindow:
		// The cell's t is the start of its (current) window.
		te := max(t, cp.t)
		r := reckonedFrom(d.ResetAfter, waited, te-t)
		if p.kind == FixedWindow {
			*cp, ok = p.fixedGiveBack(*cp, te, n, r)
		} else {
			*cp, ok = p.slidingGiveBack(*cp, te, n, r)
		}
	default:
		w, q := bucketSeen(d, waited, p.capacity)
		nt, live := tb.notes[h]
		live = live && p.noteLive(nt.g, t)
		low, lowLive := own.lowering(tb, h, nt, live)
		var ntp *bucketNote
		if lowLive {
			ntp = &low
		}
		var g u128
		*cp, g = p.bucketGiveBack(*cp, t, n, reckoned(d.ResetAfter, waited), w, q, ntp)
		if ok = g != (u128{}); ok {
			before := nt
			p.noteGiven(&nt, live, t, g, *cp)
			if tb.notes == nil {
				tb.notes = make(map[uint64]bucketNote)
			}
			tb.notes[h] = nt
			own.wrote(tb, h, before, live, nt)
		}
	}
	return ok
}

// peek writes into dst's Decisions what a Take of checks, valid ones, at t
// would report without consuming: takeMany's steps for a denied Take.
func (s *MemoryStore) peek(dst []Refunded, checks []Check, t int64) {
	ops := make([]pending, len(checks))
	var locked shardSet
	for i := range checks {
		h := s.hash(checks[i].Key)
		ops[i].h = h
		locked.add(h & s.mask)
	}
	s.lockShards(locked)
	defer s.unlockShards(locked)
	dups := newDups(len(checks))
	for i := range checks {
		op := &ops[i]
		sh := &s.shards[op.h&s.mask]
		tb, _ := sh.table(&checks[i].Spec) // valid: no error
		op.tb, op.n, op.lim = tb, checks[i].cost(), checks[i].Limit
		op.dup = dups.find(ops, i)
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
