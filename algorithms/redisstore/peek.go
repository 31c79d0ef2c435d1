package redisstore

import (
	"context"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// modePeekAlone decides each check alone without consuming, and writes
// nothing (main.lua).
const modePeekAlone = 6

var _ algorithms.Peeker = (*Store)(nil)

// Peek implements [algorithms.Peeker]: it writes into dst what a Take of
// each check alone would decide, in one script call (on a Cluster whose
// keys span slots, one per slot, in parallel, as a Take's first phase),
// deciding at the Redis server's clock, or the injected one ([WithClock]),
// as Take does. The script reads each key (a rebuilt sliding_log total
// included) and writes nothing: no key is made, changed or given a new
// expiry. Its decisions are Take's exactly, by the same Lua. Like a Take,
// a Peek goes through the circuit breaker ([WithCircuitBreaker]) and is
// bounded by [WithTimeout]; a key holding a value the store did not write
// fails it with an error matching [algorithms.ErrKeyState].
//
// The deny cache ([WithDenyCache]) neither answers a Peek nor learns from
// one: a Peek always asks Redis. It is what a status endpoint shows, and a
// cached denial can outlive its cause (a key reset or given back by
// another process) and reports the Remaining of its time.
func (s *Store) Peek(ctx context.Context, dst []algorithms.Decision, checks []algorithms.Check) error {
	if err := s.do(ctx, opPeek, dst, checks); err != nil {
		return err
	}
	for i := range checks {
		// Decided without consuming, an admitted leaky_queue check's
		// Delay, the wait until the queue is free, is its ResetAfter.
		if d := &dst[i]; d.Allowed && checks[i].Spec.Algorithm == algorithms.LeakyQueue {
			d.Delay = d.ResetAfter
		}
	}
	return nil
}

// peek decides r's checks each alone without consuming, into dst, in one
// script call, or, split (r's keys span cluster slots), in one per slot, in
// parallel, as a split Take's first phase.
func (s *Store) peek(ctx context.Context, r *request, split bool, dst []algorithms.Decision) error {
	if split {
		return s.evalSlots(ctx, opPeek, r, slotGroups(r), modePeekAlone, dst)
	}
	return s.evalDecisions(ctx, opPeek, r, nil, modePeekAlone, dst)
}
