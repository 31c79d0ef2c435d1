package algorithms

import (
	"fmt"
	"time"
)

// A Decision is the outcome of one check at one instant. It is a comparable
// value. The zero Decision denies.
type Decision struct {
	// Allowed reports whether this check passes. The request is admitted,
	// and consumes its cost, only when every check of its Take passes: in a
	// Take that is denied, no check consumes, and a check that passed reports
	// the state as it is.
	Allowed bool
	// Limit is the capacity of the check's Spec (see [Spec.Capacity]), or
	// the limit it is judged at ([Check.Limit]).
	Limit int64
	// Remaining is the number of whole units still available after this
	// decision, never negative. For leaky_queue it is the number of unit
	// requests the queue would still admit now, one after another; a
	// request of any cost up to the capacity is admitted while it is not 0.
	Remaining int64
	// RetryAfter is, for a denied request, the shortest wait after which the
	// same request would be admitted if nothing else arrived; 0 when Allowed.
	// A check that follows others on its key and Spec in one Take is
	// decided as if they had been admitted just before it, whether they
	// were or not (so every check after a denied one on its key is denied
	// too), and its RetryAfter is the shortest wait after which they and it
	// would all be admitted: the wait of one check of their combined cost
	// on the key's state before the Take (for leaky_queue, of the queue's
	// taking a request behind the places they would hold), since a retry
	// counts them again at its own instant. So a denied Take made again,
	// unchanged, after the longest RetryAfter of its denied checks, with
	// nothing else arriving, is admitted, and at any earlier instant it is
	// still denied. A Take whose checks on one key ask together for more than
	// the key can ever admit at once (more than its capacity; for
	// leaky_queue, all but the last more than its capacity less one), which
	// no wait would let through, is not denied but refused with a
	// *[CostError] (see [ValidateChecks]), as a single check above the
	// capacity is.
	RetryAfter time.Duration
	// ResetAfter is the time until the key is back to its full allowance if
	// nothing else arrives; 0 when it already is. For leaky_queue that is
	// until the queue is empty (a new request's Delay 0), which can come
	// after Remaining is back at Limit.
	ResetAfter time.Duration
	// NextAfter is the time until Remaining next grows if nothing else
	// arrives (for Remaining 0, the wait for one unit); 0 when Remaining is
	// already at Limit. It is the "t" of the IETF RateLimit header.
	NextAfter time.Duration
	// Delay is, for an admitted leaky_queue request, how long the caller must
	// hold it before passing it on; 0 for every other kind.
	Delay time.Duration
}

// A Check asks for Cost units of Spec's allowance for Key.
type Check struct {
	Spec Spec
	// Key identifies the client. Stores keep separate state for each
	// (Spec, Key) pair, so the same key under two specs never shares state.
	Key string
	// Cost is the number of units the request takes; 0 means 1. A negative
	// cost, or one above the capacity it is judged at ([Check.Judged]), is
	// an error, as are costs of the checks of one call on one key under one
	// Spec that together pass what the key can ever admit at once (see
	// [ValidateChecks]).
	Cost int64
	// Limit, when not 0, is the limit the check is judged at in place of
	// Spec.Limit, on the state the store keeps for Spec and Key: the check
	// is admitted when that state, holding everything counted under Spec,
	// has room for Cost below Limit, and its Decision reports Limit, the
	// Remaining below it and the waits until there is room below it: it
	// decides exactly as a check of the Spec with Limit in place of its
	// own would decide on that same state. The window kinds count requests
	// whatever their limit (fixed_window, sliding_window, sliding_log and
	// sliding_buckets: their state is a count of the units admitted in a
	// window, or the instants they were admitted at), so a limit lowered
	// from L to l can be applied to the counts kept under L: a client that
	// used 40 of 100 gets 10 more when the limit drops to 50, not a fresh
	// 50. Package policy judges a guard so (see policy.Policy.WithLimit).
	// A limit raised from L to l can be applied to them too: a client that
	// used 100 of 100 gets 10 more when the limit rises to 110 within the
	// window, not a fresh 110 (see [Kind.Raisable]); the state then counts
	// more than Spec.Limit, and a check at Spec.Limit on it is denied until
	// the window has freed room below Spec.Limit.
	//
	// Limit must be 0 for the bucket kinds (token_bucket, leaky_bucket,
	// leaky_queue), whose state (a bucket's level, a queue's tail) is a
	// function of their rate. For fixed_window, sliding_window and
	// sliding_buckets, whose state is a pure count, it may be anything from
	// 1 to [MaxLimit]. For sliding_log it must be between 1 and Spec.Limit:
	// its state keeps the instant of each admission in the window (grouped
	// by instant), at most Spec.Limit of them, which bounds its memory per
	// key; a higher limit would let one key hold up to that many. For a
	// window kind, Limit equal to Spec.Limit decides as 0 does (on the
	// general path of a Take of several checks: see [MemoryStore.TakeOne]).
	Limit int64
}

// Judged returns the Spec c is judged at: Spec with Limit in place of its
// own when c.Limit is set.
func (c Check) Judged() Spec {
	s := c.Spec
	if c.Limit != 0 {
		s.Limit = c.Limit
	}
	return s
}

// Windowed reports whether the state of k is a count of units admitted
// in a window, or the instants they were admitted at, whatever the
// limit: fixed_window, sliding_window, sliding_log and sliding_buckets.
// A check of such a kind can be judged at a limit of its own, lower than
// its Spec's ([Check.Limit]), and for the kinds [Kind.Raisable] reports,
// higher.
func (k Kind) Windowed() bool {
	switch k {
	case FixedWindow, SlidingWindow, SlidingLog, SlidingBuckets:
		return true
	}
	return false
}

// Raisable reports whether a check of k can be judged at a limit above
// its Spec's ([Check.Limit]), up to [MaxLimit]: fixed_window,
// sliding_window and sliding_buckets, whose state is a count of the units
// admitted in a window (or in each of its sub-windows), of any size up to
// MaxLimit. Not sliding_log: its state keeps an instant for each
// admission in its window (grouped by instant), at most Spec.Limit of
// them, which bounds the memory of its keys.
func (k Kind) Raisable() bool {
	switch k {
	case FixedWindow, SlidingWindow, SlidingBuckets:
		return true
	}
	return false
}

// cost returns c's cost with the zero value defaulted.
func (c Check) cost() int64 {
	if c.Cost == 0 {
		return 1
	}
	return c.Cost
}

// Validate reports whether c can be decided: its Spec is valid, its Limit
// is 0 or, for a window kind, between 1 and Spec.Limit, or [MaxLimit] for
// the kinds [Kind.Raisable] reports (a *[SpecError] whose Field is
// "Check.Limit"), and its cost is between 1 and the capacity it is judged
// at ([Check.Judged]).
func (c Check) Validate() error {
	if err := c.Spec.Validate(); err != nil {
		return err
	}
	return c.validateJudged()
}

// validateJudged returns the error of Validate of c, whose Spec is valid:
// that of its Limit, or of its cost against the capacity it is judged at.
func (c Check) validateJudged() error {
	if c.Limit != 0 {
		bad := func(format string, args ...any) error {
			return &SpecError{Spec: c.Spec, Field: "Check.Limit", Reason: fmt.Sprintf(format, args...)}
		}
		switch {
		case !c.Spec.Algorithm.Windowed():
			return bad("must be 0 for %s, whose state depends on its limit; got %d", c.Spec.Algorithm, c.Limit)
		case c.Limit < 1:
			return bad("must be positive (or 0 for Spec.Limit), got %d", c.Limit)
		case c.Limit > MaxLimit:
			return bad("must be at most %d, got %d", MaxLimit, c.Limit)
		case c.Limit > c.Spec.Limit && !c.Spec.Algorithm.Raisable():
			return bad("must be at most Spec.Limit %d for %s, whose state keeps an instant for each admission in its window, at most Spec.Limit of them; got %d", c.Spec.Limit, c.Spec.Algorithm, c.Limit)
		}
	}
	if c.Cost < 0 {
		return &CostError{Spec: c.Judged(), Cost: c.Cost}
	}
	if c.cost() > c.Judged().Capacity() {
		return &CostError{Spec: c.Judged(), Cost: c.Cost}
	}
	return nil
}

// ValidateChecks returns the error a Take of checks returns before it
// decides anything, or nil: the first check, in order, that is invalid on
// its own ([Check.Validate]) or that takes the checks of its Key under its
// Spec up to it past what that key can ever admit at once. The stores keep
// one state per (Spec, Key), and decide a check that follows others on its
// key as if they had been admitted just before it, so such checks could
// never all be admitted: more than the capacity the last of them is
// judged at ([Check.Judged]: its Spec's, or its Limit) together, or for
// leaky_queue, whose queue takes a request while the requests ahead of it
// hold at most the capacity less one places, more than the capacity less
// one before the last of them. That is a *[CostError] whose Combined is
// their total so far. Checks of one key under different Specs, or of
// different keys, are never combined.
func ValidateChecks(checks []Check) error {
	rp := newRepeats(len(checks))
	for i := range checks {
		if err := checks[i].Validate(); err != nil {
			return err
		}
		if err := rp.check(checks, i); err != nil {
			return err
		}
	}
	return nil
}

// pairwiseChecks bounds the checks of one call that are compared pair by
// pair to find a key named twice among them, which allocates nothing;
// past it a map finds them, in time linear in the checks (comparing the
// pairs of a call of 30,000 checks took seconds, the memory store's Take
// under the locks of its keys' shards: TestManyChecksLinear).
const pairwiseChecks = maxBatch

// specKey is the state of one key under one Spec, as the checks of a call
// name it.
type specKey struct {
	spec Spec
	key  string
}

// repeats finds the *CostError of repeatError for the checks of one call,
// looked at in order: pair by pair for up to pairwiseChecks checks, past
// that with the cost of the checks looked at so far on each key under
// each Spec.
type repeats struct {
	ahead map[specKey]int64 // nil: pair by pair
}

// newRepeats returns the repeats of a call of n checks.
func newRepeats(n int) repeats {
	if n <= pairwiseChecks {
		return repeats{}
	}
	return repeats{ahead: make(map[specKey]int64, n)}
}

// check returns repeatError(checks, i). Past pairwiseChecks checks it
// counts checks[i] among the checks ahead of the later ones on its key:
// it must then be called for every check that repeatError would count
// (the checks of checks[i]'s key and Spec before it), in order, and for
// none twice.
func (r *repeats) check(checks []Check, i int) error {
	if r.ahead == nil {
		if i == 0 {
			return nil
		}
		return repeatError(checks, i)
	}
	c := &checks[i]
	k := specKey{c.Spec, c.Key}
	ahead := r.ahead[k]
	r.ahead[k] = ahead + c.cost()
	return aheadError(c, ahead)
}

// repeatError returns the *CostError of checks[i], a valid check, when it
// and the checks before it on its Key under its Spec (valid too) ask
// together for more than that key can ever admit at once, and nil
// otherwise (as when no check before it shares its key and Spec). It
// compares the Specs and Keys themselves, so that it counts the checks of
// one state whatever a store keys its state by.
func repeatError(checks []Check, i int) error {
	c := &checks[i]
	var ahead int64 // the cost of the earlier checks on the key
	for j := range i {
		if o := &checks[j]; o.Key == c.Key && o.Spec == c.Spec {
			ahead += o.cost()
		}
	}
	return aheadError(c, ahead)
}

// aheadError returns repeatError's error for c behind earlier checks on
// its key under its Spec that cost ahead together.
func aheadError(c *Check, ahead int64) error {
	if ahead == 0 {
		return nil
	}
	// The callers stop at the first error, so the earlier checks on the
	// key cost at most the highest limit one of them is judged at, and
	// this one at most its own: at most 2·MaxLimit, no overflow. A check
	// judged at a limit of its own ([Check.Limit]), lower or higher than
	// its Spec's, can never be admitted behind more than that limit holds,
	// and on a key with nothing counted, is behind up to that much.
	limit, total := c.Judged().Capacity(), ahead+c.cost()
	if c.Spec.Algorithm == LeakyQueue {
		// A place in the queue is taken while the wait ahead is at most
		// MaxDelay: ahead·W/L <= MaxDelay ⇔ ahead <= capacity − 1.
		if ahead <= limit-1 {
			return nil
		}
	} else if total <= limit {
		return nil
	}
	return &CostError{Spec: c.Judged(), Cost: c.Cost, Combined: total}
}
