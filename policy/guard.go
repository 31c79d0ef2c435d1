package policy

import (
	"math/bits"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/nested"
)

// A Result some of whose policies are guarded ([Policy.Guards]) makes
// each store call (Take, Peek, Refund, GiveBack, Reset) on its checks
// followed by one more per guard of each guarded policy: the same key and
// cost under the guard's Spec, judged at the limit Policy.GuardLimit
// reports (Check.Limit: the policy's own for a guard of its window kind
// and shape, see guardCheck). Its decisions are then the store's merged:
// each guarded policy's with its guards' (mergeGuard). The store call's
// checks and its own decisions wait in a guardRoom, which Refund and
// GiveBack, which pass the store the Take's decisions, read.
//
// But a copy lowered by WithLimit whose guard (its first) is its Spec at
// the higher limit it was lowered from, of a window kind (or raised, from
// a lower limit, of a kind that [algorithms.Kind.Raisable] reports), is checked
// once (Policy.folds): Prepare makes its check that guard's, judged at
// its limit, which decides what its own and the guard's would. With no
// other guard it needs no guardRoom (guarded leaves it out); dropGuard
// of that guard makes its check its own again (a middleware further out
// counted the guard's state), and Reset forgets its own Spec's state
// too.

// The operations that decide a policy nested in another middleware are
// package middleware's, through internal/nested, and no user's: called on
// the Result of a request a middleware decided (middleware.FromContext),
// they would change what it counted, reports and gives back.
func init() {
	nested.Set(nested.Ops[*Result]{
		DropGuard:     (*Result).dropGuard,
		DropOwn:       (*Result).dropOwn,
		MergeGuard:    (*Result).mergeOuterGuard,
		MergeOwn:      (*Result).mergeOuterOwn,
		Folded:        (*Result).isFolded,
		DecisionUnder: (*Result).decisionUnder,
	})
}

// guardRoom holds the store call of a Result with guarded policies: its
// n checks, then one per guard of each guarded one (idx: the index among
// the n of each, in order), and the store's decisions of them all.
type guardRoom struct {
	checks []algorithms.Check
	decs   []algorithms.Decision
	idx    []int8
	// off[k]: the guarded policies (a mask over the Set) whose k-th guard
	// ([Policy.Guards]) the store calls leave out until the next Prepare
	// (see dropGuard); a policy of n guards one of which is dropped has
	// the bits of the slots past its n set too, so that one whose guards
	// are all dropped has every bit set (see allOff).
	off [MaxGuards]uint64
	// own: the guarded policies (a mask over the Set) whose own check the
	// store calls leave out until the next Prepare, keeping their guards
	// (see dropOwn).
	own uint64
}

// guarded reports whether some policy of res is guarded (and its guard
// not dropped) with a check of its guards beside its own: its store calls
// are then the guardRoom's. A policy whose first guard is folded into its
// own check and that has no other (Policy.folds) is checked once, in
// res's own room, whether or not that guard is dropped (see dropGuard).
func (res *Result) guarded() bool {
	if res.set == nil {
		return false
	}
	g := res.mask & res.set.guarded &^ (res.set.folds &^ res.set.carried)
	if g != 0 && res.gr != nil {
		g &^= res.gr.allOff()
	}
	return g != 0
}

// allOff returns the guarded policies whose guards are all dropped (see
// dropGuard).
func (gr *guardRoom) allOff() uint64 {
	m := gr.off[0]
	for _, o := range gr.off[1:] {
		m &= o
	}
	return m
}

// index returns the index in res's Set of its i-th evaluated policy.
func (res *Result) index(i int) int {
	m := res.mask
	for ; i > 0; i-- {
		m &= m - 1
	}
	return bits.TrailingZeros64(m)
}

// isFolded reports whether the store calls of res check its i-th policy
// once, on the state of its first guard ([Policy.Guards]: the Spec it
// was lowered, or raised, from by [Policy.WithLimit]) judged at its limit, in place
// of a check under its own Spec and one under that guard: it is such a
// copy, of a window kind, whose guard has its shape
// ([Policy.GuardLimit] is its own limit), and that guard is not dropped
// (dropGuard). Nothing is counted under the policy's own Spec
// then: that guard's state, counting every request its own would and
// more, judged at its limit, decides what both would. It is for a caller
// that matches the states of two Results (package middleware, through
// internal/nested.Folded: a policy nested in a middleware further out
// that counted it). It reports false for an index out of range, and
// before Prepare.
func (res *Result) isFolded(i int) bool {
	if res.set == nil || uint(i) >= uint(res.n) {
		return false
	}
	b := res.index(i)
	checks, _ := res.parts()
	return res.folded(b, res.set.policies[b], &checks[i])
}

// folded reports whether c, the i-th check of res, of the b-th policy of
// its Set, p, is its folded one (see Policy.folds): its first guard's
// state judged at its limit, standing for its own and that guard's
// checks (not dropped by dropGuard, which unfolds it).
func (res *Result) folded(b int, p *Policy, c *algorithms.Check) bool {
	return res.set.folds&(1<<b) != 0 && c.Spec == p.guard
}

// dropGuard makes the store calls of res (Take, Peek, Refund, GiveBack)
// leave out the k-th guard ([Policy.Guards]) of each policy of mask (a
// mask over res's Set) that has one, until the next Prepare; called for
// every k, those policies are decided under their own Spec alone. It is
// for a caller that knows the request was counted under such a guard's
// Spec and key already, by a middleware further out deciding the policy
// the guard was made from: counting it again would count it twice there.
// A policy guarded by its configured Spec and by reloads' replaced Specs
// ([Policy.WithGuard]) may have been counted further out under some of
// them only. Call it after Prepare and before Take. Package middleware
// calls it through internal/nested.DropGuard.
func (res *Result) dropGuard(mask uint64, k int) {
	if res.set == nil || k < 0 || k >= MaxGuards {
		return
	}
	if mask &= res.mask & res.set.guarded; mask == 0 {
		return
	}
	if k == 0 {
		// A folded first guard (see Policy.folds): the policy's own
		// check takes its place again.
		checks, _ := res.parts()
		for i, m := 0, res.mask; m != 0; i, m = i+1, m&(m-1) {
			if b := bits.TrailingZeros64(m); mask&(1<<b) != 0 {
				if p := res.set.policies[b]; res.folded(b, p, &checks[i]) {
					checks[i].Spec, checks[i].Limit = p.spec, 0
				}
			}
		}
		// One without another guard has one check still, its own: no
		// room.
		if mask &^= res.set.folds &^ res.set.carried; mask == 0 {
			return
		}
	}
	if res.gr == nil {
		res.gr = new(guardRoom)
	}
	for m := mask; m != 0; m &= m - 1 {
		b := bits.TrailingZeros64(m)
		if n := res.set.policies[b].nGuards(); k < n {
			res.gr.off[k] |= 1 << b
			for j := n; j < MaxGuards; j++ {
				res.gr.off[j] |= 1 << b // it has no j-th (see allOff)
			}
		}
	}
}

// dropOwn makes the store calls of res (Take, Peek, Refund, GiveBack)
// leave out the check under their own Spec of the guarded policies
// ([Policy.Guards]) of mask, a mask over res's Set, until the next
// Prepare, and keep their guards' that dropGuard does not leave
// out: the converse of dropGuard. Such a policy is decided under its
// guards alone, each judged at the limit [Policy.GuardLimit] reports: its
// decision is its first guard's merged with its others' (the Limit the
// first guard's as judged: the policy's own for a guard of its window
// kind and shape). It is for a caller that knows the
// request was counted under the policy's Spec and key already, by a
// middleware further out deciding the same state, but not under each of
// its guards: the guards it did not count still hold here. A policy
// whose guards are all dropped, or that has none, keeps its own check (a
// store call checks each policy under one Spec at least); so does each
// policy under [Result.Reset], which forgets every state of a policy.
// Call it after Prepare and before Take. Package middleware calls it
// through internal/nested.DropOwn.
func (res *Result) dropOwn(mask uint64) {
	if res.set == nil {
		return
	}
	if mask &= res.mask & res.set.guarded; mask == 0 {
		return
	}
	if res.gr == nil {
		res.gr = new(guardRoom)
	}
	res.gr.own |= mask
}

// mergeOuterOwn merges d, the decision under the i-th policy's own Spec of the
// store call that counted the request there (a middleware's further out:
// see dropOwn), into the policy's decision, taken with its own
// check dropped: the policy's decision is then as if that check had been
// one of this Result's, with its own Limit, the lower Remaining, and the
// longer waits (d's Delay is left out: the request was held for it
// there). It does nothing for a policy whose own check was not dropped,
// or before Take; a later Refund or GiveBack reports the guards' states
// alone. Call it after Take. Package middleware calls it through
// internal/nested.MergeOwn.
func (res *Result) mergeOuterOwn(i int, d algorithms.Decision) {
	if !res.taken || uint(i) >= uint(res.n) || res.gr == nil {
		return
	}
	b := res.index(i)
	if res.gr.own&(1<<b) == 0 {
		return // its own check was not dropped
	}
	checks, ds := res.parts()
	sc := checks
	if res.guarded() {
		sc = res.gr.checks
	}
	if sc[i].Spec == res.set.policies[b].spec {
		return // kept: its guards are all dropped
	}
	d.Delay = 0
	ds[i] = mergeGuard(d, ds[i])
}

// mergeOuterGuard merges d, the decision of a check under one of the i-th
// policy's guards ([Policy.Guards]) that was left out of res
// (dropGuard) because the store call of a middleware further out
// counted the request under it, into the policy's decision, as if that
// check had been one of this Result's: allowed when both are, the lower
// Remaining (with the wait for it to grow), the longer waits, the
// policy's Limit (d's Delay is left out: the request was held for it
// there). Package middleware passes that decision judged at the limit
// the policy judges the guard at ([Policy.GuardLimit]), which may be
// lower or higher than the one the middleware further out judged it at.
// It does nothing before
// Take; a later Refund or GiveBack reports the states res checked alone.
// Call it after Take. Package middleware calls it through
// internal/nested.MergeGuard.
func (res *Result) mergeOuterGuard(i int, d algorithms.Decision) {
	if !res.taken || uint(i) >= uint(res.n) {
		return
	}
	_, ds := res.parts()
	d.Delay = 0
	ds[i] = mergeGuard(ds[i], d)
}

// decisionUnder returns the i-th policy's decision under spec alone, and
// true, when spec is the policy's Spec or the Spec of one of its guards
// ([Policy.Guards]) that the store call checked (not dropped by
// dropGuard or dropOwn): the decision of that one
// check, not merged with the others as [Result.Decision] is. A policy
// made by [Policy.WithLimit] whose first guard is judged at its limit
// ([Policy.GuardLimit]) is checked once on that guard's state, which
// counts every request its own Spec's would and more: its decision under
// either Spec is that check's (unless that guard is dropped). It returns
// false for another Spec, and before Take. It is for a caller that knows
// which of those states a later request is decided under (package
// middleware: a policy counted by a middleware in shadow mode further
// out, which one further in decides on the retry; it calls it through
// internal/nested.DecisionUnder).
func (res *Result) decisionUnder(i int, spec algorithms.Spec) (algorithms.Decision, bool) {
	if !res.taken || uint(i) >= uint(res.n) {
		return algorithms.Decision{}, false
	}
	checks, ds := res.parts()
	b := res.index(i)
	p := res.set.policies[b]
	// A folded check (see Policy.folds) stands for the policy's own,
	// unless dropOwn left that out.
	own := res.folded(b, p, &checks[i]) && spec == p.spec && (res.gr == nil || res.gr.own&(1<<b) == 0)
	if !res.guarded() {
		if checks[i].Spec == spec || own {
			return ds[i], true
		}
		return algorithms.Decision{}, false
	}
	// The store call's checks and decisions, unmerged; the i-th check a
	// guard's when the policy's own is dropped (dropOwn) or folded.
	gr := res.gr
	if gr.checks[i].Spec == spec || own {
		return gr.decs[i], true
	}
	for j, k := range gr.idx {
		if int(k) == i && gr.checks[len(checks)+j].Spec == spec {
			return gr.decs[len(checks)+j], true
		}
	}
	return algorithms.Decision{}, false
}

// The guard rooms of up to 2, 4 and 8 checks (policies and guards), each
// in one allocation.
type (
	guardRoom2 struct {
		guardRoom
		c [2]algorithms.Check
		d [2]algorithms.Decision
		i [2]int8
	}
	guardRoom4 struct {
		guardRoom
		c [4]algorithms.Check
		d [4]algorithms.Decision
		i [4]int8
	}
	guardRoom8 struct {
		guardRoom
		c [8]algorithms.Check
		d [8]algorithms.Decision
		i [8]int8
	}
)

// newGuardRoom returns an empty guardRoom with room for k checks.
func newGuardRoom(k int) *guardRoom {
	switch {
	case k <= 2:
		r := new(guardRoom2)
		r.checks, r.decs, r.idx = r.c[:0], r.d[:0], r.i[:0]
		return &r.guardRoom
	case k <= 4:
		r := new(guardRoom4)
		r.checks, r.decs, r.idx = r.c[:0], r.d[:0], r.i[:0]
		return &r.guardRoom
	case k <= 8:
		r := new(guardRoom8)
		r.checks, r.decs, r.idx = r.c[:0], r.d[:0], r.i[:0]
		return &r.guardRoom
	}
	return &guardRoom{checks: make([]algorithms.Check, 0, k), decs: make([]algorithms.Decision, 0, k), idx: make([]int8, 0, k)}
}

// guardChecks fills res's guardRoom with the store call of its checks
// and returns it. A room too small for them is replaced, keeping the
// checks dropped (see dropGuard and dropOwn). The i-th check of the call
// is the i-th policy's own, or, when it is dropped (dropOwn), its first
// guard's kept; the other guards' follow.
func (res *Result) guardChecks(checks []algorithms.Check) *guardRoom {
	k := len(checks)
	for m := res.mask & res.set.guarded; m != 0; m &= m - 1 {
		k += res.set.policies[bits.TrailingZeros64(m)].nGuards()
	}
	if res.gr == nil || cap(res.gr.checks) < k {
		gr := newGuardRoom(k)
		if res.gr != nil {
			gr.off, gr.own = res.gr.off, res.gr.own
		}
		res.gr = gr
	}
	gr := res.gr
	gr.checks, gr.idx = append(gr.checks[:0], checks...), gr.idx[:0]
	for i, m := 0, res.mask; m != 0; i, m = i+1, m&(m-1) {
		b := bits.TrailingZeros64(m)
		p := res.set.policies[b]
		// Its first guard folded (see Policy.folds) is in its place
		// already, as a guard kept takes the place of its own check
		// dropped; unfolded, that guard is dropped (dropGuard, which
		// marks it in off only for a policy with another guard). Its
		// guards are in the order of Policy.Guards, the index of each
		// its k in off.
		folds := res.set.folds&(1<<b) != 0
		own := gr.own&(1<<b) != 0 && !res.folded(b, p, &checks[i]) // its first guard kept takes its place
		gs, n := p.guardList()
		for k, g := range gs[:n] {
			if k == 0 && folds {
				continue
			}
			if gr.off[k]&(1<<b) != 0 {
				continue // dropped (dropGuard)
			}
			if own {
				gr.checks[i], own = p.guardCheck(checks[i], g), false
				continue
			}
			gr.checks = append(gr.checks, p.guardCheck(checks[i], g))
			gr.idx = append(gr.idx, int8(i))
		}
	}
	gr.decs = gr.decs[:len(gr.checks)]
	return gr
}

// merge writes to ds the decisions of the n checks of res from the store
// call's decisions all (gr.checks' order): each guarded policy's merged
// with its guards' (its first guard's with its others' when its own check
// is dropped: see dropOwn).
func (gr *guardRoom) merge(ds, all []algorithms.Decision) {
	n := len(ds)
	copy(ds, all[:n])
	for j, i := range gr.idx {
		ds[i] = mergeGuard(ds[i], all[n+j])
	}
}

// mergeGuard returns the decision of a guarded policy, d, merged with its
// guard's, g: allowed when both are; the lower Remaining, and the wait for
// it to grow (both waits when they are equal); the longer of each wait,
// and of each Delay when both admit (a denied decision has none). Limit
// stays the policy's.
//
// A guard holding at least the policy's whole allowance (g.Remaining at
// least d.Limit, no Delay: a guard checked at its own, higher limit)
// lowers nothing: its waits, for units beyond the policy's Limit, are
// not the policy's, whose NextAfter and ResetAfter are 0 at its Limit.
// (A guard judged at the policy's Limit, see Policy.GuardLimit, holds no
// more than it.)
func mergeGuard(d, g algorithms.Decision) algorithms.Decision {
	if g.Remaining >= d.Limit && g.Delay == 0 {
		g.NextAfter, g.ResetAfter = 0, 0
	}
	d.Allowed = d.Allowed && g.Allowed
	switch {
	case g.Remaining < d.Remaining:
		d.Remaining, d.NextAfter = g.Remaining, g.NextAfter
	case g.Remaining == d.Remaining:
		d.NextAfter = max(d.NextAfter, g.NextAfter)
	}
	d.RetryAfter = max(d.RetryAfter, g.RetryAfter)
	d.ResetAfter = max(d.ResetAfter, g.ResetAfter)
	if d.Allowed {
		d.Delay = max(d.Delay, g.Delay)
	} else {
		d.Delay = 0 // a Delay is an admitted request's (see algorithms.Decision)
	}
	return d
}
