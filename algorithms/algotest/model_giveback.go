package algotest

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// GiveBackAt gives back at instant now the units of checks, admitted by
// one Take whose decisions were ds, waited after that Take, as
// [algorithms.GiveBacker.GiveBack] describes, and returns what GiveBack
// reports of each check. It is written from GiveBack's rules: with E =
// now + ResetAfter − waited,
//
//   - fixed_window: the count of the window whose end is nearest E drops by
//     the cost, never below 0, if that window is the key's at now;
//   - sliding_window: of the windows k−1 and k of now, the one whose start
//     is nearest E − 2W loses the cost from its count;
//   - sliding_buckets: sub-window round(E/S) − Buckets, if in the window at
//     now, loses the cost;
//   - sliding_log: if E − W − 1 ns is still in the window, the requests
//     logged at the instant nearest it (a tie to the older) still in the
//     window lose up to the cost;
//   - token_bucket, leaky_bucket: used (C − tokens, or the level) drops by
//     min(cost, used, u − waited·L/W), u being what the Take left in use
//     at its instant, as its decision (ResetAfter, Remaining) tells it,
//     lowered by the key's note of its latest give-back (as
//     [algorithms.GiveBacker.GiveBack] describes);
//   - leaky_queue: [Model.RefundAt]'s place.
//
// (now being the key's effective instant for the window kinds). Then every
// check reports what a Take of checks at now would without consuming, as
// a denied [Model.TakeAt] does, with Delay 0.
func (m *Model) GiveBackAt(now time.Time, checks []algorithms.Check, ds []algorithms.Decision, waited time.Duration) ([]algorithms.Refunded, error) {
	if len(ds) != len(checks) {
		return nil, fmt.Errorf("algotest: GiveBack: %d decisions for %d checks", len(ds), len(checks))
	}
	if waited < 0 {
		return nil, fmt.Errorf("algotest: GiveBack: waited must not be negative, got %s", waited)
	}
	if err := validate(checks); err != nil {
		return nil, err
	}
	places, err := m.RefundAt(now, checks, ds, waited)
	if err != nil {
		return nil, err
	}
	admitted := true
	for _, d := range ds {
		admitted = admitted && d.Allowed
	}
	t := now.UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]algorithms.Refunded, len(checks))
	// The notes of the bucket keys as they stood before this give-back:
	// a check's give-back moves none of the units of the checks before it
	// in its Take up, so those are lowered by the note before the call.
	before := map[modelKey]*giveNote{}
	for i := len(checks) - 1; i >= 0 && admitted; i-- {
		c := checks[i]
		if c.Spec.Algorithm == algorithms.LeakyQueue {
			out[i].Given = places[i].Given
			continue
		}
		mc, ok := m.keys[modelKey{c.Spec, c.Key}]
		if !ok {
			continue // never held: nothing to give back
		}
		// E − now, exactly.
		r := new(big.Int).Sub(big.NewInt(int64(ds[i].ResetAfter)), big.NewInt(int64(waited)))
		mk := modelKey{c.Spec, c.Key}
		if _, ok := before[mk]; !ok {
			before[mk] = noteOf(mc)
		}
		out[i].Given = giveBack(mc, c.Spec, effective(mc, t), cost(c), t, r, ds[i], waited, before[mk])
	}
	ds2 := m.peekAt(t, checks)
	for i := range out {
		out[i].Decision = ds2[i]
	}
	return out, nil
}

// nearest returns the index k of the boundary k·w nearest x (a tie goes
// to the later), for x an exact integer.
func nearest(x *big.Int, w int64) int64 {
	k := new(big.Int).Add(x, big.NewInt(w/2))
	k.Div(k, big.NewInt(w)) // Euclidean: floor for w > 0
	if !k.IsInt64() {
		return 1 << 62 // matches no window of a state
	}
	return k.Int64()
}

// noteOf returns the note of mc, a bucket's (nil for none, or another
// kind).
func noteOf(mc machine) *giveNote {
	switch m := mc.(type) {
	case *tokenBucket:
		return m.note
	case *leakyBucket:
		return m.note
	}
	return nil
}

// giveBack gives back n units of mc at te, its effective instant (t the
// give-back's), of a Take whose key was to be back to full at t + r, its
// decision d, waited before t; a bucket's Take is lowered by note, the
// key's note before the give-back's call.
func giveBack(mc machine, sp algorithms.Spec, te, n, t int64, r *big.Int, d algorithms.Decision, waited time.Duration, note *giveNote) bool {
	e := new(big.Int).Add(big.NewInt(t), r) // E
	switch m := mc.(type) {
	case *fixedWindow:
		k := nearest(e, m.w) - 1
		if !m.held || m.count == 0 || k != m.win || floorDiv(te, m.w) != m.win {
			return false
		}
		m.count -= min(n, m.count)
		return true
	case *slidingWindow:
		k, prev, curr := m.counts(te)
		start := nearest(e, m.w) - 2 // the Take's window
		switch {
		case start == k && curr > 0:
			curr -= min(n, curr)
		case start == k-1 && prev > 0:
			prev -= min(n, prev)
		default:
			return false
		}
		m.win, m.prev, m.curr = k, prev, curr
		return true
	case *slidingBuckets:
		j := nearest(e, m.size) - m.n
		now := floorDiv(te, m.size)
		if j > now || j <= now-m.n || m.counts[j] == 0 {
			return false
		}
		m.counts[j] -= min(n, m.counts[j])
		return true
	case *slidingLog:
		at := new(big.Int).Sub(e, big.NewInt(m.w+1))
		if at.Cmp(big.NewInt(te-m.w)) < 0 {
			return false // the Take's instant has left the window
		}
		// The logged instant nearest at (a tie to the older); the
		// requests logged at it (one event each) lose up to n, the newest
		// first.
		var best *big.Int
		var ts int64
		for _, ev := range m.events {
			if ev.ts < te-m.w {
				continue // left the window: not this Take's, and no longer counted
			}
			d := new(big.Int).Sub(big.NewInt(ev.ts), at)
			d.Abs(d)
			if best == nil || d.Cmp(best) < 0 {
				best, ts = d, ev.ts
			}
		}
		if best == nil {
			return false
		}
		for i := len(m.events) - 1; i >= 0 && n > 0; i-- {
			ev := &m.events[i]
			if ev.ts != ts {
				continue
			}
			k := min(n, ev.n)
			ev.n -= k
			n -= k
			if ev.n == 0 {
				m.events = append(m.events[:i], m.events[i+1:]...)
			}
		}
		return true
	case *tokenBucket:
		used := m.used(t)
		g := bucketGive(used, n, r, sp, d, waited, note.live(sp, t), t)
		if g.Sign() == 0 {
			return false
		}
		m.tokens = new(big.Rat).Add(m.tokensAt(t), g)
		m.last = t
		m.note = m.note.given(sp, t, g, sub(used, g))
		return true
	case *leakyBucket:
		used := m.used(t)
		g := bucketGive(used, n, r, sp, d, waited, note.live(sp, t), t)
		if g.Sign() == 0 {
			return false
		}
		m.level = sub(used, g)
		m.last = t
		m.note = m.note.given(sp, t, g, sub(used, g))
		return true
	}
	return false
}

// bucketGive returns what a bucket of spec sp whose use at the give-back
// is used gives back of a Take of n units whose key was to be full r ns
// after the give-back, d its decision, waited before it, note the key's
// live note (nil for none), t the give-back's instant: min(n, used,
// u − waited·L/W), at least 0, u being takeUse's lowered by note.lower.
func bucketGive(used *big.Rat, n int64, r *big.Int, sp algorithms.Spec, d algorithms.Decision, waited time.Duration, note *giveNote, t int64) *big.Rat {
	capacity := sp.Capacity()
	q := capacity - min(max(d.Remaining, 0), capacity) // units in use after the Take
	if r.Sign() <= 0 || used.Sign() <= 0 || q <= 0 {
		return new(big.Rat)
	}
	rate := frac(sp.Limit, int64(sp.Window))
	wr := new(big.Rat).Mul(ratInt(int64(waited)), rate)
	u := takeUse(new(big.Rat).Add(used, wr), int64(d.ResetAfter), q, sp)
	u = note.lower(u, n, t, int64(waited), sp)
	g := sub(u, wr)
	if g.Sign() <= 0 {
		return new(big.Rat)
	}
	if used.Cmp(g) < 0 {
		g = used
	}
	if ratInt(n).Cmp(g) < 0 {
		g = ratInt(n)
	}
	return g
}

// takeUse returns the units a Take on a bucket of spec sp left in use at
// its instant, told from its decision (ResetAfter a ns, Remaining C − q)
// and from x, the bucket's use at that instant as it stands now. The
// Take's use u is above (a−1)·L/W and q − 1, and at most a·L/W and q, a
// range shorter than a ns and than a unit; x is u plus the costs of the
// requests after the Take (fewer than C units), had the bucket not been
// full between them and the Take's instant been reckoned exactly. So u is
// the one x − m, m whole, in that range. When there is none, u is the
// least use a state can hold in the range (a state's use is a whole number
// of 1/W units, W in ns), and never more than its top.
func takeUse(x *big.Rat, a, q int64, sp algorithms.Spec) *big.Rat {
	rate := frac(sp.Limit, int64(sp.Window))
	hi := new(big.Rat).Mul(ratInt(a), rate)
	if ratInt(q).Cmp(hi) < 0 {
		hi = ratInt(q)
	}
	lo := new(big.Rat).Mul(ratInt(a-1), rate)
	if lo.Cmp(ratInt(q-1)) < 0 {
		lo = ratInt(q - 1)
	}
	u := new(big.Rat).Add(lo, frac(1, int64(sp.Window)))
	if x.Cmp(hi) <= 0 {
		if u.Cmp(x) < 0 {
			u = x
		}
	} else if d := sub(x, hi); d.Cmp(ratInt(sp.Capacity())) <= 0 {
		y := sub(x, ratInt(ceilRat(d)))
		if y.Cmp(lo) > 0 {
			u = y
		}
	}
	if hi.Cmp(u) < 0 {
		u = hi
	}
	return u
}

// peekAt returns what a Take of checks, valid ones, at t would report
// without consuming: TakeAt's decisions of a denied call. m.mu must be held.
func (m *Model) peekAt(t int64, checks []algorithms.Check) []algorithms.Decision {
	work, out, _ := m.decideInOrder(t, checks)
	m.denied(t, checks, work, out)
	return out
}

// GiveBack implements algorithms.GiveBacker on the model: GiveBackAt at the
// clock's instant, written into dst.
func (s modelStore) GiveBack(ctx context.Context, dst []algorithms.Refunded, checks []algorithms.Check, ds []algorithms.Decision, waited time.Duration) error {
	if len(dst) != len(checks) {
		return fmt.Errorf("algotest: GiveBack: %d results for %d checks", len(dst), len(checks))
	}
	if err := s.ready(ctx); err != nil {
		return err
	}
	out, err := s.m.GiveBackAt(s.clock.Now(), checks, ds, waited)
	if err != nil {
		return err
	}
	copy(dst, out)
	return nil
}
