package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

var _ algorithms.Refunder = (*Store)(nil)

// modeRefund gives back leaky_queue places (refund.lua).
const modeRefund = 4

// Refund implements [algorithms.Refunder]: it gives back the queue places
// of the leaky_queue checks of an admitted Take, in one script call (one
// per check on a Cluster whose keys span slots, where each key is refunded
// on its own, and a call that fails keeps no other key's place). It reads
// the Redis server's clock, or the injected one ([WithClock]), as Take
// does; waited is measured by the caller, so a place is recognised as the
// last of its queue when the queue's spacing W/L is longer than a round
// trip (see algorithms.Refunder). A key Redis no longer holds has nothing
// to give back.
func (s *Store) Refund(ctx context.Context, checks []algorithms.Check, ds []algorithms.Decision, waited time.Duration) error {
	if len(ds) != len(checks) {
		return fmt.Errorf("redisstore: Refund: %d decisions for %d checks", len(ds), len(checks))
	}
	if waited < 0 {
		return fmt.Errorf("redisstore: Refund: waited must not be negative, got %s", waited)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return algorithms.ErrClosed
	}
	for i := range ds {
		if !ds[i].Allowed {
			return nil // a denied Take consumed nothing
		}
	}
	// The queue checks, last first: the script refunds them in this order.
	var queue []algorithms.Check
	var rems []any
	for i := len(checks) - 1; i >= 0; i-- {
		c := checks[i]
		if c.Spec.Algorithm != algorithms.LeakyQueue {
			continue
		}
		if err := c.Validate(); err != nil {
			return err
		}
		queue = append(queue, c)
		rems = append(rems, remArg(ds[i].Delay, waited))
	}
	if len(queue) == 0 {
		return nil
	}
	var now time.Time
	if s.clock != nil {
		now = s.clock.Now()
	}
	var probe uint64
	if s.breaker != nil {
		var err error
		if probe, err = s.breaker.allow(s.localNow(now)); err != nil {
			return err
		}
	}
	parent := ctx
	ctx, cancel := s.callContext(ctx)
	defer cancel()
	r := s.newRequest(queue, now)
	var err error
	if s.cluster != nil && !r.oneSlot() {
		// Each key on its own: one that fails (its node unreachable) does
		// not keep the others' places. The first error is returned.
		for i := range queue {
			if e := s.refund(ctx, r, []int{i}, rems[i:i+1]); e != nil && err == nil {
				err = e
			}
		}
	} else {
		err = s.refund(ctx, r, nil, rems)
	}
	if s.synchronous(ctx) {
		r.release() // no goroutine can still hold its keys or arguments
	}
	err = s.ownDeadline("refund", err, parent)
	if s.breaker != nil {
		s.breaker.record(err, s.localNow(now), probe)
	}
	if s.deny != nil {
		// Even after an error: the script may have run (a reply lost, a
		// deadline met after the call was sent, some keys of a Cluster
		// refunded), and a denial cached from before must not outlive a
		// state Redis admits from.
		s.deny.forget(queue)
	}
	return err
}

// refund runs the refund of the checks idx of r (all when nil), whose
// remaining waits are rems.
func (s *Store) refund(ctx context.Context, r *request, idx []int, rems []any) error {
	keys := r.keys
	var args []any
	if idx == nil {
		args = append(r.args(nil, modeRefund), rems...)
	} else {
		keys = r.keysOf(idx)
		args = append(r.args(idx, modeRefund), rems...)
	}
	v, err := s.eval(ctx, s.client, keys, args)
	if err != nil {
		return err
	}
	if n, ok := v.(int64); !ok || n != 0 {
		return fmt.Errorf("redisstore: unexpected refund reply %v (%T)", v, v)
	}
	return nil
}

// maxRem bounds the remaining waits sent to the script, whose wide-value
// products take operands below 2^53 (2*rem*L). It changes no outcome: a
// state the script uses is at most 2*10^6 s (< 2^51 ns) from t (far), so
// a wait of 2^51 ns or more recognises any place as the last, and one of
// -2^51 or less none (2*n*W + W < 2^52*L, since n*W/L is at most
// MaxDelay + W/L, below 2^48 ns).
const maxRem = 1 << 51

// remArg returns the remaining wait Delay - waited within ±maxRem, for
// waited >= 0 and any Delay (one that states the remaining wait itself is
// negative once the departure has passed: algorithms.Limiter.RefundN).
func remArg(delay, waited time.Duration) int64 {
	if int64(delay) < -maxRem+int64(waited) {
		return -maxRem // also where delay - waited would overflow
	}
	return min(int64(delay-waited), maxRem)
}
