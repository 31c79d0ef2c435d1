package algorithms

import (
	"context"
	"errors"
	"time"

	"github.com/ratekeeper/ratekeeper/internal/nilness"
)

// A Limiter binds a Store to one Spec, for direct use outside HTTP (a job
// queue, an outbound client, a CLI). It is safe for concurrent use as its
// Store is. For several specs decided together, call [Store.Take].
type Limiter struct {
	store Store
	mem   *MemoryStore // store, when it is one: its single-check path does not allocate
	spec  Spec
}

// NewLimiter returns a Limiter deciding spec on store. It fails when store
// is nil or spec is invalid.
func NewLimiter(store Store, spec Spec) (*Limiter, error) {
	if nilness.Is(store) {
		return nil, errors.New("algorithms: NewLimiter: store is nil")
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	l := &Limiter{store: store, spec: spec}
	l.mem, _ = store.(*MemoryStore)
	return l, nil
}

// Spec returns the limit l decides.
func (l *Limiter) Spec() Spec { return l.spec }

// Allow decides one unit for key now.
func (l *Limiter) Allow(ctx context.Context, key string) (Decision, error) {
	return l.AllowN(ctx, key, 1)
}

// AllowN decides n units for key now. A denial is a Decision; the error is
// for a failing store or an n out of range (a *CostError).
func (l *Limiter) AllowN(ctx context.Context, key string, n int64) (Decision, error) {
	c := Check{Spec: l.spec, Key: key, Cost: n}
	if n == 0 {
		// Cost 0 in a Check means 1; here it is a caller's mistake.
		return Decision{}, &CostError{Spec: l.spec, Cost: 0}
	}
	if l.mem != nil {
		return l.mem.TakeOne(ctx, c)
	}
	ds, err := l.store.Take(ctx, c)
	if err != nil {
		return Decision{}, err
	}
	if len(ds) != 1 {
		return Decision{}, errors.New("algorithms: store returned no decision")
	}
	return ds[0], nil
}

// RefundN gives back the place of n units for key that an admitted AllowN
// took in a leaky_queue, for a request that will not go ahead; left is the
// time from now to the place's departure (negative once it has passed).
// See [Refunder] for which places come back. It returns what the store
// reports: the queue as it stands after the refund (Delay 0) and whether
// the place came back. With a store that is not a Refunder, or a Spec of
// another kind, RefundN does nothing and returns the zero Refunded. n is
// checked as AllowN checks it (0 is a *CostError).
func (l *Limiter) RefundN(ctx context.Context, key string, n int64, left time.Duration) (Refunded, error) {
	if err := l.checkCost(n); err != nil {
		return Refunded{}, err
	}
	rf, ok := l.store.(Refunder)
	if !ok || l.spec.Algorithm != LeakyQueue {
		return Refunded{}, nil
	}
	var out [1]Refunded
	err := rf.Refund(ctx, out[:], []Check{{Spec: l.spec, Key: key, Cost: n}}, []Decision{{Allowed: true, Delay: left}}, 0)
	if err != nil {
		return Refunded{}, err
	}
	return out[0], nil
}

// GiveBackN gives back the n units for key that an admitted AllowN took,
// for a request that went ahead but is not to count (a successful login
// under a limit of failed ones); d is the Decision AllowN returned and
// waited the time since it returned. What comes back follows
// [GiveBacker]'s rules for l's kind: nothing once the request's window
// has rolled, no more than has not refilled for the buckets. It returns
// what the store reports: the key as it stands after the give-back, and
// whether any unit came back. A denied d gives nothing back. With a store
// that is not a GiveBacker, GiveBackN does nothing and returns the zero
// Refunded. Give back each AllowN at most once. n is checked as AllowN
// checks it (0 is a *CostError).
func (l *Limiter) GiveBackN(ctx context.Context, key string, n int64, d Decision, waited time.Duration) (Refunded, error) {
	if err := l.checkCost(n); err != nil {
		return Refunded{}, err
	}
	gb, ok := l.store.(GiveBacker)
	if !ok {
		return Refunded{}, nil
	}
	var out [1]Refunded
	if err := gb.GiveBack(ctx, out[:], []Check{{Spec: l.spec, Key: key, Cost: n}}, []Decision{d}, waited); err != nil {
		return Refunded{}, err
	}
	return out[0], nil
}

// checkCost returns the *CostError AllowN would return for n, whatever the
// store: n must be between 1 and the Spec's capacity (0, which a Check
// reads as 1, is the caller's mistake here).
func (l *Limiter) checkCost(n int64) error {
	if n < 1 || n > l.spec.Capacity() {
		return &CostError{Spec: l.spec, Cost: n}
	}
	return nil
}
