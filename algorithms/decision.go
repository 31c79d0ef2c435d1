package algorithms

import "time"

// A Decision is the outcome of one check at one instant. It is a comparable
// value. The zero Decision denies.
type Decision struct {
	// Allowed reports whether this check passes. The request is admitted,
	// and consumes its cost, only when every check of its Take passes: in a
	// Take that is denied, no check consumes, and a check that passed reports
	// the state as it is.
	Allowed bool
	// Limit is the capacity of the check's Spec: see [Spec.Capacity].
	Limit int64
	// Remaining is the number of whole units still available after this
	// decision, never negative. For leaky_queue it is the number of unit
	// requests the queue would still admit now, one after another; a
	// request of any cost up to the capacity is admitted while it is not 0.
	Remaining int64
	// RetryAfter is, for a denied request, the shortest wait after which the
	// same request would be admitted if nothing else arrived; 0 when Allowed.
	// A check that follows others on its key and Spec in one Take is
	// decided, and its wait reckoned, as if they had been admitted just
	// before it: a Take whose checks on one key ask together for more than
	// the key can ever admit at once (more than its capacity; for
	// leaky_queue, all but the last more than its capacity less one) is
	// never admitted, although its denied check reports a wait.
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
	// cost, or one above Spec.Capacity(), is an error.
	Cost int64
}

// cost returns c's cost with the zero value defaulted.
func (c Check) cost() int64 {
	if c.Cost == 0 {
		return 1
	}
	return c.Cost
}

// Validate reports whether c can be decided: its Spec is valid and its cost
// is between 1 and the Spec's capacity.
func (c Check) Validate() error {
	if err := c.Spec.Validate(); err != nil {
		return err
	}
	if c.Cost < 0 {
		return &CostError{Spec: c.Spec, Cost: c.Cost}
	}
	if c.cost() > c.Spec.Capacity() {
		return &CostError{Spec: c.Spec, Cost: c.Cost}
	}
	return nil
}
