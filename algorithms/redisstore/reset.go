package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

var _ algorithms.Resetter = (*Store)(nil)

// Reset implements [algorithms.Resetter]: it deletes the Redis keys that
// hold each check's state under its Spec (its Cost is ignored): the key,
// and sliding_log's second key (":l"). Every Spec is validated first: an
// invalid one is an error and nothing is deleted. A key Redis does not
// hold is no error. The keys go in one DEL, or on a Cluster whose keys span
// slots in one DEL per slot, sent together in one pipeline (a round trip
// to each node, in parallel; a DEL that fails does not keep the others'
// keys). As for Take, the call goes through the circuit breaker
// ([WithCircuitBreaker]) and within the timeout ([WithTimeout]) and the
// caller's context; a context already done, or a closed store, fails it
// before anything is sent.
//
// The deny cache ([WithDenyCache]) forgets the checks' keys, after the
// deletion and even when it failed (the DEL may have run): this process
// admits a reset key at once, and a denial of it in flight meanwhile is
// not cached. Other processes' caches may go on denying it until their
// cached RetryAfter.
func (s *Store) Reset(ctx context.Context, checks ...algorithms.Check) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return algorithms.ErrClosed
	}
	for i := range checks {
		if err := checks[i].Spec.Validate(); err != nil {
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
	groups := s.resetGroups(checks)
	err := s.resetCall(ctx, func(ctx context.Context) error { return s.delGroups(ctx, groups) })
	err = s.ownDeadline("reset", err, parent)
	if s.breaker != nil {
		s.breaker.record(err, s.localNow(now), ticket)
		recorded = true
	}
	if s.deny != nil {
		s.deny.forget(checks)
	}
	return err
}

// resetGroups returns the Redis keys of checks' state, in groups that each
// lie in one Cluster slot: one group unless the store is on a Cluster and
// the keys span slots.
func (s *Store) resetGroups(checks []algorithms.Check) [][]string {
	keys := make([]string, 0, len(checks)+1)
	var slots []uint16
	for _, c := range checks {
		si := s.specs.get(c.Spec)
		k, tag := s.redisKey(c.Key, si)
		keys = append(keys, k)
		if si.code == codeLog {
			keys = append(keys, k+":l")
		}
		if s.cluster != nil {
			sl := slot(tag)
			for len(slots) < len(keys) {
				slots = append(slots, sl)
			}
		}
	}
	if s.cluster == nil {
		return [][]string{keys}
	}
	var groups [][]string
	at := make(map[uint16]int)
	for i, k := range keys {
		g, ok := at[slots[i]]
		if !ok {
			g = len(groups)
			at[slots[i]] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], k)
	}
	return groups
}

// delGroups deletes the keys of groups, each group's in one DEL: one call for
// one group, else a pipeline (a Cluster client sends each node its DELs,
// the nodes in parallel).
func (s *Store) delGroups(ctx context.Context, groups [][]string) error {
	if len(groups) == 1 {
		return s.client.Del(ctx, groups[0]...).Err()
	}
	pipe := s.client.Pipeline()
	for _, g := range groups {
		pipe.Del(ctx, g...)
	}
	_, err := pipe.Exec(ctx)
	return err
}

// resetCall runs f on ctx, honouring ctx even when the client does not bound
// its I/O by it (see Store.guard): then f runs on a goroutine the caller
// stops waiting for at ctx's end, which Close waits for; once the store is
// closed it starts none and returns ErrClosed. An error of f is returned
// as wrap returns it: ctx's own error when ctx ended, else wrapped as the
// reset's.
func (s *Store) resetCall(ctx context.Context, f func(context.Context) error) error {
	if s.synchronous(ctx) {
		return resetErr(ctx, f(ctx))
	}
	s.closing.RLock()
	if s.closed.Load() {
		s.closing.RUnlock()
		return algorithms.ErrClosed
	}
	s.inflight.Add(1)
	s.closing.RUnlock()
	ch := make(chan error, 1)
	go func() {
		defer s.inflight.Done()
		ch <- f(ctx)
	}()
	select {
	case err := <-ch:
		return resetErr(ctx, err)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// resetErr is wrap for a reset's error.
func resetErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctxDone(ctx); cerr != nil {
		return cerr
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("redisstore: reset: %w", err)
}
