package policy

import (
	"context"
	"fmt"
	"math/bits"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// AboveLimit reports whether the request's cost is above the i-th
// policy's capacity in force but within its configured capacity
// ([Policy.Configured]): the policy is a copy at a limit lowered below the
// cost ([Policy.WithLimit]: the middleware's SetLimit and
// SetLimitUnguarded, package middleware/adaptive's levels and shares).
// Such a request cannot be admitted now, but could be once the limit is
// back: it is not out of range (no *[CostError] names the policy), it is
// denied by the policy, as a request the policy has no room for now is.
// It reports false for an index out of range, and for a Result not
// prepared.
//
// [Result.Take] (and [Result.Peek]) decide such a Result without
// consuming anything, by a peek at the store ([algorithms.Peeker]), and
// [Result.Peeked] reports true. The decision of each such policy is then
// its key as the policy in force has it, as a peek reads it (its Limit,
// Remaining, NextAfter and ResetAfter; merged with its guards', as any
// decision of a guarded policy), not Allowed, without Delay, and with the
// RetryAfter after which the same request would be admitted were the
// configured limit back, nothing else arriving: the wait a check of its
// cost under the configured Spec has on the key's state (a second peek,
// so two calls of the store), and at least one second. No decision can
// know when the limit comes back (a Controller's next healthy period, a
// Fleet's count of instances going down), so it gives the earliest a
// retry could be admitted, which a limit back by then meets; a retry
// while the limit is still lowered is denied again, consuming nothing,
// with the wait as it stands then. The wait is never shorter than the
// policy's NextAfter ([Result.RetryAfter] takes the longer), and under a
// configured Spec of a bucket kind left unguarded
// ([Policy.Unguarded], SetLimitUnguarded) it reads that Spec's counters
// as they stand, which count none of the requests admitted under the
// lowered limit: what would decide were the limit back. The other
// policies' decisions are the first peek's, so that a request they would
// deny too waits for the longest.
func (res *Result) AboveLimit(i int) bool {
	if res.set == nil || uint(i) >= uint(res.n) {
		return false
	}
	checks, _ := res.parts()
	return checks[i].Cost > res.Policy(i).capacity
}

// above returns the policies of res (a mask over its Set) whose cost is
// above their limit in force (see AboveLimit): Prepare lets through a
// cost above a policy's capacity only when its configured capacity holds
// it. Only the Set's lowered policies can be: the test of that is in
// line, the walk of the checks (aboveLowered) a call.
func (res *Result) above() uint64 {
	if res.set == nil || res.mask&res.set.lowered == 0 {
		return 0
	}
	return res.aboveLowered()
}

// aboveLowered is above for a Result some of whose policies are lowered.
func (res *Result) aboveLowered() uint64 {
	var above uint64
	checks, _ := res.parts()
	for i, m := 0, res.mask; m != 0; i, m = i+1, m&(m-1) {
		b := bits.TrailingZeros64(m)
		if res.set.lowered&(1<<b) != 0 && checks[i].Cost > res.set.policies[b].capacity {
			above |= 1 << b
		}
	}
	return above
}

// denyAbove decides res, some of whose policies its cost is above the
// limit in force of (res.above()), through pk without consuming: see
// AboveLimit. For a Take (take), no decision keeps a Delay, as none of a
// denied Take does (the request is not held); a Peek's keep theirs.
func (res *Result) denyAbove(ctx context.Context, pk algorithms.Peeker, take bool) error {
	checks, ds := res.parts()
	above := res.above()
	// Their keys as they stand: a check of cost 1, which a peek decides
	// whatever the limit in force (its Allowed and RetryAfter, which the
	// cost decides, are replaced below). costs[i] is the cost of the
	// i-th check, for those policies alone.
	var costs [MaxPolicies]int64
	for i, m := 0, res.mask; m != 0; i, m = i+1, m&(m-1) {
		if above&(1<<bits.TrailingZeros64(m)) != 0 {
			costs[i], checks[i].Cost = checks[i].Cost, 1
		}
	}
	err := res.peek(ctx, pk)
	for i := range checks {
		if costs[i] != 0 {
			checks[i].Cost = costs[i]
		}
	}
	if err != nil {
		return err
	}
	// Their waits under the configured Spec, apart: the configured state
	// may be the one the first peek read (a folded check, a guard), and
	// checks of one key and Spec in one call are refused together when
	// their costs pass its capacity.
	var cbuf [inline]algorithms.Check
	var dbuf [inline]algorithms.Decision
	wc := cbuf[:0]
	for i := range checks {
		if costs[i] != 0 {
			wc = append(wc, algorithms.Check{Spec: res.Policy(i).Configured(), Key: checks[i].Key, Cost: costs[i]})
		}
	}
	wd := dbuf[:0]
	if len(wc) > len(dbuf) {
		wd = make([]algorithms.Decision, 0, len(wc))
	}
	wd = wd[:len(wc)]
	if err := pk.Peek(ctx, wd, wc); err != nil {
		return fmt.Errorf("policy: store: peek: %w", err)
	}
	k := 0
	for i := range ds {
		if take {
			ds[i].Delay = 0
		}
		if costs[i] == 0 {
			continue
		}
		var wait time.Duration
		if !wd[k].Allowed {
			wait = wd[k].RetryAfter
		}
		k++
		d := &ds[i]
		d.Allowed, d.Delay, d.RetryAfter = false, 0, max(wait, time.Second)
	}
	res.taken, res.peeked = true, true
	return nil
}

// aboveError returns the *CostError naming the policies of res whose cost
// is above their limit in force (res.above()), in Set order, for a store
// that cannot peek (see Take).
func (res *Result) aboveError() error {
	checks, _ := res.parts()
	above := res.above()
	var ce *CostError
	for i, m := 0, res.mask; m != 0; i, m = i+1, m&(m-1) {
		b := bits.TrailingZeros64(m)
		if above&(1<<b) == 0 {
			continue
		}
		p := res.set.policies[b]
		if ce == nil {
			ce = &CostError{Policy: p, Cost: checks[i].Cost}
		} else {
			ce.Others = append(ce.Others, PolicyCost{Policy: p, Cost: checks[i].Cost})
		}
	}
	return ce
}
