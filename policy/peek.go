package policy

import (
	"context"
	"errors"
	"fmt"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// Peek fills res with what a Take of its prepared checks would decide now
// through store, consuming nothing: each policy's decision as if it were
// alone (see [algorithms.Peeker]: Allowed whether a Take would admit it,
// Remaining the units left before it), so that a denial names every
// policy that would deny. Afterwards [Result.Taken] and [Result.Peeked] report
// true and the accessors (Decision, Allowed, RetryAfter, Lowest) read the
// peeked decisions; Refund and GiveBack do nothing on a peeked Result. A
// Result with no checks calls no store. A store that is not a Peeker is an
// error wrapping errors.ErrUnsupported; the store's own error is wrapped.
// On an error res holds no decisions. A policy whose cost is above its
// limit in force but within its configured one ([Result.AboveLimit]) is
// denied, as Take denies it.
func (res *Result) Peek(ctx context.Context, store algorithms.Store) error {
	res.taken, res.peeked, res.refunded, res.given, res.gaveBack = false, false, false, 0, false
	checks, _ := res.parts()
	if len(checks) > 0 {
		pk, ok := store.(algorithms.Peeker)
		if !ok {
			return fmt.Errorf("policy: store %T cannot peek: %w", store, errors.ErrUnsupported)
		}
		if res.above() != 0 {
			return res.denyAbove(ctx, pk, false)
		}
		if err := res.peek(ctx, pk); err != nil {
			return err
		}
	}
	res.taken, res.peeked = true, true
	return nil
}

// peek writes into res's decisions what pk's Peek says of its checks (and
// its guards', merged), leaving res's flags alone.
func (res *Result) peek(ctx context.Context, pk algorithms.Peeker) error {
	checks, ds := res.parts()
	if res.guarded() {
		gr := res.guardChecks(checks)
		if err := pk.Peek(ctx, gr.decs, gr.checks); err != nil {
			return fmt.Errorf("policy: store: peek: %w", err)
		}
		gr.merge(ds, gr.decs)
	} else if err := pk.Peek(ctx, ds, checks); err != nil {
		return fmt.Errorf("policy: store: peek: %w", err)
	}
	return nil
}

// Peeked reports whether res's decisions come from a [Result.Peek]: they
// consumed nothing.
func (res *Result) Peeked() bool { return res.peeked }

// Reset makes store forget the keys of res's prepared checks for the
// policies in mask (bit i: the i-th evaluated policy, [Result.Policy](i)),
// in one call: the request's client starts afresh under those policies
// (see [algorithms.Resetter]). res's decisions, if any, are left as they
// were. An empty mask calls no store. A store that is not a Resetter is an
// error wrapping errors.ErrUnsupported; the store's own error is wrapped.
func (res *Result) Reset(ctx context.Context, store algorithms.Store, mask uint64) error {
	checks, _ := res.parts()
	var buf [2 * inline]algorithms.Check
	sel := buf[:0]
	for i := range checks {
		if mask&(1<<i) != 0 {
			p := res.Policy(i)
			// Its own Spec's state, even when its check is folded into
			// its guard's (see Policy.folds): it may hold requests
			// counted before.
			c := checks[i]
			c.Spec, c.Limit = p.spec, 0
			sel = append(sel, c)
			for _, g := range p.Guards() {
				// Afresh under its guards too, which would hold it back.
				sel = append(sel, p.guardCheck(checks[i], g))
			}
		}
	}
	if len(sel) == 0 {
		return nil
	}
	rs, ok := store.(algorithms.Resetter)
	if !ok {
		return fmt.Errorf("policy: store %T cannot reset keys: %w", store, errors.ErrUnsupported)
	}
	if err := rs.Reset(ctx, sel...); err != nil {
		return fmt.Errorf("policy: store: reset: %w", err)
	}
	return nil
}
