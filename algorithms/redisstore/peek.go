package redisstore

import (
	"context"
	"fmt"
	"sync"
	"time"

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
	if len(dst) != len(checks) {
		return fmt.Errorf("redisstore: Peek: %d decisions for %d checks", len(dst), len(checks))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return algorithms.ErrClosed
	}
	for _, c := range checks {
		if err := c.Validate(); err != nil {
			return err
		}
	}
	if len(checks) == 0 {
		return nil
	}
	var now time.Time
	if s.clock != nil {
		now = s.clock.Now()
	}
	var ticket uint64
	recorded := false // the breaker has the call's outcome (see breaker.unwound)
	if s.breaker != nil {
		var err error
		if ticket, err = s.breaker.allowCtx(s.localNow(now), ctx); err != nil {
			return err
		}
		defer s.breaker.unwound(ticket, &recorded)
	}
	parent := ctx
	ctx, cancel := s.callContext(ctx)
	defer cancel()
	req := s.newRequest(checks, now)
	var err error
	if s.cluster != nil && !req.oneSlot() {
		err = s.peekSplit(ctx, req, dst)
	} else {
		var v any
		if v, err = s.eval(ctx, s.client, req.keys, req.args(nil, modePeekAlone)); err == nil {
			err = parseDecisions(v, req, nil, dst)
		}
	}
	if s.synchronous(ctx) {
		req.release() // no goroutine can still hold its keys or arguments
	}
	err = markKeyState(s.ownDeadline("peek", err, parent))
	if s.breaker != nil {
		s.breaker.record(err, s.localNow(now), ticket)
		recorded = true
	}
	if err != nil {
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

// peekSplit peeks r's checks, whose keys span several cluster slots, in
// one script call per slot, in parallel, and returns the first error.
func (s *Store) peekSplit(ctx context.Context, r *request, dst []algorithms.Decision) error {
	var groups [][]int
	bySlot := make(map[uint16]int)
	for i, tag := range r.tags {
		sl := slot(tag)
		g, ok := bySlot[sl]
		if !ok {
			g = len(groups)
			bySlot[sl] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(groups))
	for g, idx := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := s.eval(ctx, s.client, r.keysOf(idx), r.args(idx, modePeekAlone))
			if err == nil {
				err = parseDecisions(v, r, idx, dst)
			}
			errs[g] = err
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
