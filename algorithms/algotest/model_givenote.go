package algotest

import (
	"math/big"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// A giveNote is what the model keeps of a token_bucket or leaky_bucket
// key's latest give-back that gave units back, written from GiveBack's
// rules: its instant G (the latest; a give-back at an earlier instant, the
// clock behind, adds to it), the instant H at which the bucket was full
// right after it, and gam, the units the give-backs at G gave back
// together. It counts while the give-back's instant is before G or less
// than ceil(C·W/L) ns after it.
type giveNote struct {
	g   int64
	h   *big.Rat
	gam *big.Rat
}

// refill returns ceil(C·W/L): the time an empty bucket of sp takes to refill.
func refill(sp algorithms.Spec) int64 {
	return ceilRat(new(big.Rat).Mul(ratInt(sp.Capacity()), frac(int64(sp.Window), sp.Limit)))
}

// live returns nt when it still counts at t, else nil.
func (nt *giveNote) live(sp algorithms.Spec, t int64) *giveNote {
	if nt == nil || (t >= nt.g && big.NewInt(t).Sub(big.NewInt(t), big.NewInt(nt.g)).Cmp(big.NewInt(refill(sp))) >= 0) {
		return nil
	}
	return nt
}

// lower returns u, the units a Take of n units decided at t − waited left
// in use at its instant as its decision tells it, lowered to what still
// stands of it after the give-backs nt notes (nt live, or nil):
//
//   - after G (or no note): u;
//   - before G: min(u, n), the Take's own units;
//   - at G: u when the bucket used less than n units at G right after the
//     give-backs there ((H − G)·L/W < n): a Take before them would still
//     have its n there; else min(u, max(n, u − gam)).
func (nt *giveNote) lower(u *big.Rat, n, t, waited int64, sp algorithms.Spec) *big.Rat {
	if nt == nil {
		return u
	}
	t0 := new(big.Int).Sub(big.NewInt(t), big.NewInt(waited))
	nr := ratInt(n)
	minR := func(a, b *big.Rat) *big.Rat {
		if b.Cmp(a) < 0 {
			return b
		}
		return a
	}
	switch t0.Cmp(big.NewInt(nt.g)) {
	case 1:
		return u
	case -1:
		return minR(u, nr)
	}
	rate := frac(sp.Limit, int64(sp.Window))
	h := new(big.Rat).Mul(sub(nt.h, ratInt(nt.g)), rate)
	if h.Cmp(nr) < 0 {
		return u
	}
	lb := sub(u, nt.gam)
	if lb.Cmp(nr) < 0 {
		lb = nr
	}
	return minR(u, lb)
}

// given returns the note after a give-back at t that gave back g units
// and left used in use, nt being the key's note (live or not, or nil).
func (nt *giveNote) given(sp algorithms.Spec, t int64, g, used *big.Rat) *giveNote {
	rate := frac(sp.Limit, int64(sp.Window))
	h := new(big.Rat).Add(ratInt(t), new(big.Rat).Quo(used, rate)) // full then
	if live := nt.live(sp, t); live != nil && t <= live.g {
		return &giveNote{g: live.g, h: h, gam: new(big.Rat).Add(live.gam, g)}
	}
	return &giveNote{g: t, h: h, gam: new(big.Rat).Set(g)}
}
