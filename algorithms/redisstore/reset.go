package redisstore

import (
	"context"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

var _ algorithms.Resetter = (*Store)(nil)

// Reset implements [algorithms.Resetter]: it deletes the Redis keys that
// hold each check's state under its Spec (its Cost is ignored): the key,
// sliding_log's second key (":l"), for sliding_log and sliding_buckets
// the side key (":u") where a Cluster's cross-slot Takes list their
// reservations (see lua/cluster.lua), and for token_bucket and
// leaky_bucket the note of the key's latest give-back (":g", see
// lua/notes.lua). Every Spec is validated first: an
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
// deletion and even when it failed (the DEL may have run), and again when
// a DEL its caller stopped waiting for ends (it may have run later): this
// process admits a reset key at once, and a denial of it in flight
// meanwhile is not cached. Other processes' caches may go on denying it until their
// cached RetryAfter.
func (s *Store) Reset(ctx context.Context, checks ...algorithms.Check) error {
	return s.do(ctx, opReset, nil, checks)
}

// del deletes the keys of r's checks in one DEL, or, split (r's keys span
// cluster slots), in one DEL per slot, sent in one pipeline (a Cluster
// client sends each node its DELs, the nodes in parallel). It honours ctx
// even when the client does not bound its I/O by it (see Store.guard):
// then the DELs go from a goroutine the caller stops waiting for at ctx's
// end, which Close waits for, and whose panic (a client hook's) is raised
// on the caller's goroutine while it waits (handoff); once the store is
// closed it starts none and returns ErrClosed. Its error is as opErr
// returns it.
func (s *Store) del(ctx context.Context, r *request, split bool) error {
	if s.synchronous(ctx) {
		return opErr(ctx, opReset, s.delKeys(ctx, r, split))
	}
	s.closing.RLock()
	if s.closed.Load() {
		s.closing.RUnlock()
		return algorithms.ErrClosed
	}
	s.inflight.Add(1)
	s.closing.RUnlock()
	ch := make(chan asyncResult, 1)
	h := new(handoff)
	go func() {
		defer s.inflight.Done()
		defer h.ended()
		defer h.passOn(ch) // a client hook's panic is the caller's, as in evalOr
		ch <- asyncResult{err: s.delKeys(ctx, r, split)}
	}()
	select {
	case res := <-ch:
		res.raise()
		return opErr(ctx, opReset, res.err)
	case <-ctx.Done():
		res, ok := ready(ch) // done as the context ended: see ready
		if !ok {
			res, ok = h.leave(ch, s.forgetLater(r.checks)) // the DELs may run still
		}
		if ok {
			res.raise()
			return opErr(ctx, opReset, res.err)
		}
		if split {
			s.reloadSlots(ctx, ctx.Err()) // no reply in time, as a Take's part (evalOr)
		}
		return ctx.Err()
	}
}

// delKeys sends del's DELs; split, it has the client reload its slot map
// when any DEL got no reply.
func (s *Store) delKeys(ctx context.Context, r *request, split bool) error {
	if !split {
		return s.client.Del(ctx, r.resetKeys(nil)...).Err()
	}
	pipe := s.client.Pipeline()
	groups := slotGroups(r)
	for _, idx := range groups {
		pipe.Del(ctx, r.resetKeys(idx)...)
	}
	cmds, err := pipe.Exec(ctx)
	for g, idx := range groups {
		if g < len(cmds) {
			r.note(idx, cmds[g].Err())
		}
	}
	if err != nil {
		// Exec returns the first DEL's error: reload on any (reloadSlots).
		errs := make([]error, 0, len(cmds)+1)
		for _, c := range cmds {
			errs = append(errs, c.Err())
		}
		s.reloadSlots(ctx, append(errs, err)...)
	}
	return err
}

// resetKeys returns the keys of the checks idx (all when idx is nil) that
// Reset deletes: keysOf's, the side key of each sliding_log and
// sliding_buckets key, and the note key of each token_bucket and
// leaky_bucket key (sideKeysOf).
func (r *request) resetKeys(idx []int) []string {
	if idx == nil {
		idx = make([]int, len(r.checks))
		for i := range idx {
			idx[i] = i
		}
	}
	return r.sideKeysOf(idx)
}
