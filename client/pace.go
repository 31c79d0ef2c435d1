package client

import (
	"context"
	"sync/atomic"
	"time"
)

// wait holds the caller until key's holds have passed and its turn in the
// queue has come, and, while key's hold was cut short (see [cuts]), until
// it may go as the probe or the probe's answer lets it go. It returns the
// cut when the caller goes as the probe: the caller gives the probe's
// answer, or hands the role on (see [Transport.send]). tk, when not nil, is
// the caller's place at key's gate, taken earlier (see
// [Transport.RoundTrip]); wait gives it up. own, when not nil, is the cut
// whose probe the caller is already (its earlier attempt was refused
// without a wait): the caller goes as its probe again, without waiting for
// an answer, and wait returns it; on an error the caller keeps it. A role
// handed to the caller here while a hold is in force (see
// [Transport.probe]), or, with pacing, after its turn passed, is kept
// through that hold or its new turn, and handed on when wait fails. held is the time the caller has waited already for the server
// (a redirect's Retry-After, see [Transport.redirectWait]): it counts
// against the maximum wait with the holds.
func (t *Transport) wait(ctx context.Context, key string, seq uint64, tk *ticket, own *cut, held time.Duration) (probe *cut, err error) {
	var handed *cut // the probe's role, handed to the caller in wait
	defer func() {
		tk.leave()
		if probe == nil && handed != nil {
			// An error, or a panic.
			t.cuts.abort(handed)
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if key == "" {
		return nil, nil
	}
	if t.proactive {
		// With pacing, the requests that wait for a hold keep their
		// arrival order through the gate: the ticket is given up once the
		// request has its place in the queue, or leaves. Without, they do
		// while a key is cut: the ticket is given up once the request has
		// its role there (see [Transport.probe]).
		// A hold can be extended while we wait (a response in flight
		// brings news), so look again after each wait.
		// held: waited so far for holds to pass; queued: for turns in
		// the queue.
		var queued time.Duration
		// again: the request takes a new turn (see below), in its place
		// by arrival among the requests in the line.
		again := false
		for {
			// The holds, and the gate that keeps the requests waiting
			// for them in order.
			for {
				// The clock is read only when key is held, or the request
				// is to wait at the gate: one that meets neither reads no
				// instant before it is sent.
				d, now := t.holds.remainingNow(key, t.clock)
				if d > 0 {
					if held+d > t.maxWait {
						return nil, &WaitError{Key: key, Wait: held + d, MaxWait: t.maxWait, Held: true}
					}
					if pastDeadline(ctx, d) {
						return nil, &WaitError{Key: key, Wait: held + d, MaxWait: t.maxWait, Held: true, Deadline: true}
					}
					if tk == nil && (t.limiter != nil || t.cuts.n.Load() != 0) {
						tk = t.gate.enter(key, seq)
					}
					if err := t.clock.Sleep(ctx, d); err != nil {
						return nil, err
					}
					held += d
					continue
				}
				if t.limiter == nil && tk == nil && t.cuts.n.Load() == 0 {
					// Without pacing, the gate keeps the order of the
					// requests only while a key is cut: the first of them
					// to take its role there is its next probe.
					break
				}
				if tk == nil {
					if !t.gate.busy(key) {
						break
					}
					if hook := gateEnterHook.Load(); hook != nil {
						(*hook)()
					}
					tk = t.gate.enter(key, seq)
					// A hold set since we looked told the gate before we
					// were in it: look again, now that a new one tells us.
					// Else we would wait off the clock behind a request
					// asleep on that hold.
					continue
				}
				// The hold has passed: wait for the requests that came
				// before to take their turns. That wait counts as held: it
				// lasts only while one ahead waits for a new hold or the
				// store.
				if now.IsZero() {
					now = t.clock.Now()
				}
				ready, err := tk.wait(ctx)
				if err != nil {
					return nil, err
				}
				held += t.clock.Now().Sub(now)
				if ready && t.holds.remaining(key, t.clock.Now()) <= 0 {
					break
				}
			}
			if t.limiter != nil {
				// A Retry-After can make queued turns unusable: the line
				// keeps the requests in order. A request that takes a new
				// turn (see below) waits for it within what its earlier
				// turns left of the maximum wait.
				spent, err := t.queue(ctx, key, seq, again, tk, queued)
				if err != nil {
					return nil, err
				}
				queued += spent
				tk.leave()
				tk = nil
			}
			if own != nil {
				return own, nil
			}
			if t.cuts.n.Load() == 0 {
				return nil, nil
			}
			// The request leaves now, at its turn, unless key's hold was cut
			// short: then only the probe goes.
			c, more, err := t.probe(ctx, key, seq, &tk, &held)
			if !more {
				return c, err
			}
			again = true
			if c != nil {
				// Handed the probe's role during a hold, or after its
				// turn passed: go as the probe once the hold has passed,
				// at a new turn.
				own, handed = c, c
			}
			// key is held again (the probe's answer set a hold): wait
			// for that hold, as any, and take a new turn.
		}
	}
	if t.limiter == nil {
		return nil, nil
	}
	delay, now, err := t.take(ctx, key)
	if err != nil || delay <= 0 {
		return nil, err
	}
	at := now.Add(delay)
	if pastDeadline(ctx, delay) {
		t.giveBack(ctx, key, at, now)
		return nil, &WaitError{Key: key, Wait: delay, MaxWait: t.maxWait, Deadline: true}
	}
	if err := t.clock.Sleep(ctx, delay); err != nil {
		// The caller has gone: its turn goes back to the store, which
		// takes it when no request queued behind it.
		t.giveBack(ctx, key, at, t.clock.Now())
		return nil, err
	}
	return nil, nil
}

// gateEnterHook, set by tests, runs as a request that met no hold is about
// to enter a gate that others of its key are at.
var gateEnterHook atomic.Pointer[func()]

// pastDeadline reports whether a wait of d would outlast ctx's deadline: the
// request would leave at or after it, only to fail. A deadline is real time,
// whatever the Transport's Clock.
func pastDeadline(ctx context.Context, d time.Duration) bool {
	dl, ok := ctx.Deadline()
	return ok && time.Until(dl) <= d
}
