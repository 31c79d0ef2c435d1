package algorithms

// A bucketNote is what a store keeps of a token_bucket or leaky_bucket
// key's latest give-back that gave units back (a cross-slot undo, on
// Redis), so that a later give-back can tell whether its Take's decision
// still reckons the deficit ahead of the Take's units as it stands (see
// [GiveBacker.GiveBack]):
//
//   - g, the instant G of that give-back (a give-back at an earlier
//     instant, the clock behind, keeps G and adds to Γ);
//   - h, the bucket's state right after it: the instant H it is full;
//   - gam, Γ, the units (in D·L, 1/L ns of deficit) the give-backs at G
//     gave back together.
//
// A note is live while fewer than ceil(C·W/L) ns (the time an empty bucket
// takes to refill, at most MaxWindow) have passed since G: a Take decided
// at or before G has no unit left to give back after that (its decision's
// deficit has refilled), so the note changes no outcome, and the stores
// forget it. The MemoryStore keeps a key whose note is live even when it is
// idle, the note in its table's map of notes (40 bytes under the key's
// hash, beside the key's slot: a cell has no room for it); the Redis store
// keeps it in a key of its own (the key plus ":g") that expires then.
type bucketNote struct {
	g   int64
	h   cell
	gam u128
}

// refillTime returns ceil(C·W/L), the time an empty bucket takes to
// refill (at most MaxWindow for a valid Spec).
func (p *params) refillTime() int64 {
	return mul(p.capacity, p.window).divCeil(p.limit)
}

// noteLive reports whether a note of the latest give-back at g still
// counts at t: t is before g (a clock that went back) or less than
// refillTime after it.
func (p *params) noteLive(g, t int64) bool {
	return t < g || uint64(t)-uint64(g) < uint64(p.refillTime())
}

// bucketLowerDeficit returns the deficit (D·L) the give-back of a Take of
// n units, reckoned at t − w, takes the Take to have left at its instant,
// given tau, the deficit its decision reckons (bucketGiveBack's τ), and nt,
// the key's live note (nil for none):
//
//   - a Take after the note's instant G (or with no note): τ. No give-back
//     came between the Take and now, so τ still stands.
//   - a Take before G: n·W (no more than τ), its own units alone: a
//     give-back of an older Take since may have moved its units up by any
//     amount, but not before its own instant.
//   - a Take at G itself, which the store cannot order against the
//     give-backs at G: τ when the bucket held less than the Take's own n
//     units right after them (H − G < n·W/L), for a Take before them would
//     still hold its n units there, unrefilled: it came after them. Else
//     max(n·W, τ − Γ), no more than τ: at most what was given back at G
//     can have been ahead of it.
func (p *params) bucketLowerDeficit(tau u128, t, n, w int64, nt *bucketNote) u128 {
	if nt == nil {
		return tau
	}
	nw := mul(n, p.window)
	if t < nt.g {
		return minU(tau, nw) // a clock behind: before G
	}
	d := uint64(t) - uint64(nt.g) // t − G, exactly
	switch {
	case uint64(w) < d:
		return tau // after G
	case uint64(w) > d:
		return minU(tau, nw)
	case p.deficit(nt.h, nt.g).less(nw):
		return tau // at G, after the give-backs there
	}
	lb := nw
	if nt.gam.less(tau) {
		if x := tau.sub(nt.gam); nw.less(x) {
			lb = x
		}
	}
	return minU(tau, lb)
}

// noteGiven records in *nt (live: whether it held a live note) that a
// give-back at t gave back g units (D·L), leaving the bucket in state c.
// Γ is kept at most C·W: a Take's τ is at most that (q·W, q <= C), so a
// larger Γ changes no outcome (the Redis store keeps it so, in 64 bits).
func (p *params) noteGiven(nt *bucketNote, live bool, t int64, g u128, c cell) {
	if live && t <= nt.g {
		nt.gam = nt.gam.add(g) // at G, or before it (a clock behind)
	} else {
		nt.g, nt.gam = t, g
	}
	nt.gam = minU(nt.gam, mul(p.capacity, p.window))
	nt.h = c
}

func minU(a, b u128) u128 {
	if b.less(a) {
		return b
	}
	return a
}

// dropNotes forgets the notes of tb that no longer count at t (see
// bucketNote), and the map when none is left. sh.mu must be held.
func (tb *table) dropNotes(t int64) {
	for h, nt := range tb.notes {
		if !tb.p.noteLive(nt.g, t) {
			delete(tb.notes, h)
		}
	}
	if len(tb.notes) == 0 {
		tb.notes = nil
	}
}
