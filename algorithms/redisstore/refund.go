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
// of the leaky_queue checks of an admitted Take and looks at the queues
// after it (see [algorithms.Refunded]), in one script call (one per key on
// a Cluster whose keys span slots, where each key is refunded on its own,
// and a call that fails keeps no other key's place). It reads the Redis
// server's clock, or the injected one ([WithClock]), as Take does; waited
// is measured by the caller, so a place is recognised as the last of its
// queue when the two reckonings of its wait differ by less than half the
// queue's spacing W/L: exactly when the spacing is longer than twice a
// round trip (see algorithms.Refunder). A key Redis no longer holds has nothing to give
// back, and reports a fresh queue. A key holding a value the store did not
// write fails the call before anything is written, as in a Take.
func (s *Store) Refund(ctx context.Context, dst []algorithms.Refunded, checks []algorithms.Check, ds []algorithms.Decision, waited time.Duration) error {
	if err := s.giveReady(ctx, "Refund", dst, checks, ds, waited); err != nil {
		return err
	}
	admitted := true // a denied Take consumed nothing: nothing to give back
	for i := range ds {
		admitted = admitted && ds[i].Allowed
	}
	// The queue checks, in order, are validated as a Take validates them
	// (see algorithms.ValidateChecks: only queue checks share their Spec),
	// before anything is given back.
	var queue []algorithms.Check
	for _, c := range checks {
		if c.Spec.Algorithm == algorithms.LeakyQueue {
			queue = append(queue, c)
		}
	}
	if err := algorithms.ValidateChecks(queue); err != nil {
		return err
	}
	// Last first: the script refunds them in this order.
	queue = queue[:0]
	var at []int // the index in checks of each of queue
	var rems []any
	for i := len(checks) - 1; i >= 0; i-- {
		c := checks[i]
		if c.Spec.Algorithm != algorithms.LeakyQueue {
			continue
		}
		queue = append(queue, c)
		at = append(at, i)
		if admitted {
			rems = append(rems, remArg(ds[i].Delay, waited))
		} else {
			rems = append(rems, "n") // look only
		}
	}
	for i := range checks {
		if checks[i].Spec.Algorithm != algorithms.LeakyQueue {
			dst[i] = algorithms.Refunded{Decision: ds[i]}
		}
	}
	if len(queue) == 0 {
		return nil
	}
	// On a Cluster whose keys span slots each key is refunded on its own
	// (its checks in one call, so that each looks at the key after all its
	// refunds): one that fails (its node unreachable) does not keep the
	// others' places.
	out := make([]algorithms.Refunded, len(queue))
	if err := s.give(ctx, "refund", modeRefund, queue, rems, out, parseRefund); err != nil {
		return err
	}
	for k, i := range at {
		dst[i] = out[k]
	}
	return nil
}

// giveReady returns the error of a Refund or GiveBack (op) whose arguments
// do not fit together, whose context is done, or on a closed store.
func (s *Store) giveReady(ctx context.Context, op string, dst []algorithms.Refunded, checks []algorithms.Check, ds []algorithms.Decision, waited time.Duration) error {
	if len(ds) != len(checks) {
		return fmt.Errorf("redisstore: %s: %d decisions for %d checks", op, len(ds), len(checks))
	}
	if len(dst) != len(checks) {
		return fmt.Errorf("redisstore: %s: %d results for %d checks", op, len(dst), len(checks))
	}
	if waited < 0 {
		return fmt.Errorf("redisstore: %s: waited must not be negative, got %s", op, waited)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return algorithms.ErrClosed
	}
	return nil
}

// give runs the script in mode (modeRefund, modeGiveBack) for checks,
// whose per-check script values are vals, as Take runs its own: on the
// store's clock, through the breaker and within the store's timeout, in
// one call, or one per key on a Cluster whose keys span slots (then every
// key is tried and the first error returned), having a cluster client
// reload its slot map when a call got no reply (reloadSlots). parse reads
// the reply for the checks idx of r (all when nil) into out, indexed as
// checks. op names the call in errors. Even after an error the deny cache
// forgets checks: the script may have run (a reply lost, a deadline met
// after the call was sent, some keys of a Cluster given back), and a
// denial cached from before must not outlive a state Redis admits from;
// a call its caller stopped waiting for has them forgotten again when it
// ends (evalOnce), as it may reach Redis after this.
func (s *Store) give(ctx context.Context, op string, mode int, checks []algorithms.Check, vals []any, out []algorithms.Refunded,
	parse func(v any, r *request, idx []int, out []algorithms.Refunded) error) error {
	var now time.Time
	if s.clock != nil {
		now = s.clock.Now()
	}
	var probe ticket
	recorded := false // the breaker has the call's outcome (see breaker.unwound)
	b := s.breaker
	if b != nil {
		var err error
		if probe, err = b.allowCtx(s.localNow(now), ctx); err != nil {
			return err
		}
		defer b.unwound(probe, &recorded)
	}
	parent := ctx
	ctx, cancel := s.callContext(ctx)
	defer cancel()
	r := s.newRequest(checks, now)
	split := s.cluster != nil && !r.oneSlot()
	// On a Cluster, the breakers of the nodes the call goes to, as for
	// a Take (see Store.do).
	var p *pass
	var failed error // no node for the call (see breakerFor)
	if s.nodes != nil {
		var err error
		local := s.localNow(now)
		if split {
			// Every key is tried: those of a node whose circuit is
			// open fail with ErrCircuitOpen, unsent.
			if p, err = s.nodes.allowAll(ctx, parent, r, local, false); err != nil {
				r.release()
				s.refused()
				return err
			}
			defer p.unwound(&recorded)
			failed, r.pass = p.failed, p
		} else {
			b, failed = s.nodes.breakerFor(ctx, r.keys[0], local)
			if probe, err = b.allowCtx(local, parent); err != nil {
				r.release()
				s.refused()
				return err
			}
			defer b.unwound(probe, &recorded)
		}
	}
	run := func(idx []int) error {
		vs := vals
		if idx != nil {
			vs = make([]any, len(idx))
			for k, i := range idx {
				vs[k] = vals[i]
			}
		}
		keys := r.keysOf(idx)
		if mode == modeGiveBack {
			keys = r.noteKeysOf(idx) // a bucket's note key too (lua/notes.lua)
		}
		v, err := s.evalOnce(ctx, op, s.client, keys, append(r.args(idx, mode), vs...), checks)
		if err != nil {
			return err
		}
		return parse(v, r, idx, out)
	}
	var err error
	switch {
	case failed != nil:
		err = failed
	case split:
		groups := byKey(r)
		errs := make([]error, len(groups))
		refused := false
		for g, idx := range groups {
			var open error
			if p != nil {
				open = p.refuses(slot(r.tags[idx[0]]))
			}
			if open != nil {
				errs[g], refused = open, true
			} else {
				errs[g] = run(idx)
				r.note(idx, errs[g])
			}
			if errs[g] != nil && err == nil {
				err = errs[g]
			}
		}
		if refused {
			s.refused()
		}
		s.reloadSlots(ctx, errs...)
	default:
		err = run(nil)
		s.reloadSlots(ctx, err)
	}
	if s.synchronous(ctx) {
		r.release() // no goroutine can still hold its keys or arguments
	}
	err = markKeyState(s.ownDeadline(op, err, parent))
	if p != nil {
		p.record(err, func(e error) error { return markKeyState(s.ownDeadline(op, e, parent)) }, s.localNow(now))
		recorded = true
	} else if b != nil {
		b.record(err, s.localNow(now), probe)
		recorded = true
	}
	if s.deny != nil {
		s.deny.forget(checks)
	}
	return err
}

// noteKeysOf returns r.keysOf(idx) followed by the note key (":g") of
// each token_bucket and leaky_bucket key of the checks idx (all when nil):
// the keys a give-back reads and writes. Not the side keys (":u") of
// sliding_log and sliding_buckets keys, which only a reservation and its
// undo use: while a slot migrates, Redis refuses a call naming a key the
// node does not hold (TRYAGAIN), and a side key is held only while a
// cross-slot reservation stands (TestGiveBackWhileSlotMigrates).
func (r *request) noteKeysOf(idx []int) []string {
	ks := r.keysOf(idx)
	note := func(i int) {
		if c := r.infos[i].code; c == codeToken || c == codeLeaky {
			ks = append(ks, r.keys[r.first[i]]+":g")
		}
	}
	if idx == nil {
		for i := range r.checks {
			note(i)
		}
		return ks
	}
	for _, i := range idx {
		note(i)
	}
	return ks
}

// byKey returns the indices of r's checks grouped by key, in order.
func byKey(r *request) [][]int {
	var groups [][]int
	seen := make(map[string]int)
	for i := range r.checks {
		k := r.keys[r.first[i]]
		if g, ok := seen[k]; ok {
			groups[g] = append(groups[g], i)
			continue
		}
		seen[k] = len(groups)
		groups = append(groups, []int{i})
	}
	return groups
}

// parseRefund reads the refund script's reply v for the checks idx of r
// (all when nil) into out (indexed as r's checks).
func parseRefund(v any, r *request, idx []int, out []algorithms.Refunded) error {
	n := len(r.checks)
	if idx != nil {
		n = len(idx)
	}
	vals, ok := v.([]any)
	if !ok || len(vals) != refundWidth*n {
		return fmt.Errorf("redisstore: unexpected refund reply %v (%T)", v, v)
	}
	for k := range n {
		i := k
		if idx != nil {
			i = idx[k]
		}
		var f [refundWidth]int64
		for j := range f {
			x, ok := vals[k*refundWidth+j].(int64)
			if !ok || x < 0 { // no field is negative, as in decodeDecision
				return fmt.Errorf("redisstore: unexpected refund reply %v", vals[k*refundWidth+j])
			}
			f[j] = x
		}
		out[i] = algorithms.Refunded{
			Decision: algorithms.Decision{
				Allowed:    f[0] == 1,
				Limit:      r.checks[i].Spec.Capacity(),
				Remaining:  f[1],
				RetryAfter: time.Duration(f[2]),
				ResetAfter: time.Duration(f[3]),
				NextAfter:  time.Duration(f[4]),
			},
			Given: f[5] == 1,
		}
	}
	return nil
}

// refundWidth is the number of integers the refund script returns per check.
const refundWidth = 6

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
