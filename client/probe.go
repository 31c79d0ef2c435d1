package client

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// cuts keeps the keys whose hold was cut short: the server asked for a
// longer wait than [WithMaxRetryAfter], and the hold the requests wait
// behind was cut to it. Once that cut hold has passed, the end the server
// announced still ahead, the key is half open: one request at a time goes
// out (the probe), and the others wait for its answer (see
// [Transport.probe]). It is safe for concurrent use.
type cuts struct {
	mu      sync.Mutex
	m       map[string]*cut
	sweepAt int
	// n counts the keys in m: while it is 0 a request need not look.
	n atomic.Int64
	// grace is how long after the end of a key's last hold the requests
	// that waited on it may still be on their way to their roles: twice
	// the maximum wait (see [cuts.extend]). Set once, by New.
	grace time.Duration
}

// A cut is a key's half-open state. Its fields are guarded by cuts.mu.
type cut struct {
	until time.Time // the end of the wait the server announced
	// held is the end of the last hold set on the key while it is cut:
	// the requests asleep on it wake then, and take their roles after.
	held time.Time
	out  bool // a probe is out
	// waiters are the requests waiting for the probe's answer, in the
	// order they arrived at the Transport (see queue and [cut.push]).
	waiters queue[probeWaiter, *probeWaiter]
}

// A probeWaiter is a request waiting for the probe's answer. Its fields
// but wake are guarded by cuts.mu.
type probeWaiter struct {
	wake   context.CancelFunc // ends its sleep
	seq    uint64             // when its request arrived (see [Transport.RoundTrip])
	probe  bool               // it was handed the probe's role
	queued bool               // it is among its cut's waiters
	links[probeWaiter]
}

// place returns w's links among its cut's waiters.
func (w *probeWaiter) place() *links[probeWaiter] { return &w.links }

// push puts w among c's waiters in its place by arrival: behind those
// whose requests arrived before its own, ahead of those that arrived
// after (a request released by an earlier answer, or that waited for a
// hold, may come to wait after requests that arrived later). It is most
// often last, found in constant time. cuts.mu must be held.
func (c *cut) push(w *probeWaiter) {
	x := c.waiters.tail
	for x != nil && x.seq > w.seq {
		x = x.prev
	}
	c.waiters.insertAfter(w, x)
	w.queued = true
}

// unlink takes w, one of c's waiters, out of them. cuts.mu must be held.
func (c *cut) unlink(w *probeWaiter) {
	c.waiters.remove(w)
	w.queued = false
}

// Roles a request has at a key's cut (see [cuts.enter]).
const (
	roleFree  = iota // no cut, or the server's wait has passed: go
	roleProbe        // go, as the probe
	roleWait         // wait for the probe's answer
	roleHeld         // wait for the hold in force
)

// maxIdleCuts is the most keys the record of cuts keeps that nothing waits
// on (see [cuts.extend]): some 230 bytes each.
const maxIdleCuts = 1 << 14

// extend records that the server asked key not to be sent to until until,
// further away than the Transport honours, unless that is recorded already
// for later, and that key is held until held (the hold cut short). Ended
// cuts are swept each time the map doubles, so it stays as small as the
// set of keys cut. A server chooses that end, up to a year away, and a
// Transport may call hosts it does not choose: so a sweep that finds
// maxIdleCuts keys or more also forgets those nothing waits on, until
// fewer than half that many are left or none such is: no probe out (and
// so no request waiting for one's answer), no hold in force in hs, and
// none that ended within cs.grace, since the requests asleep on a hold
// take their roles only once it has ended, after their turns when paced
// (each of those waits within the maximum wait): a key cut long ago that
// nobody has called since. A key forgotten is as one never cut: its next
// refusal cuts it again. cs.mu is taken before hs.mu, as in [cuts.enter].
func (cs *cuts) extend(key string, until, held, now time.Time, hs *holds) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if c := cs.m[key]; c != nil {
		if until.After(c.until) {
			c.until = until
		}
		if held.After(c.held) {
			c.held = held
		}
		return
	}
	if cs.m == nil {
		cs.m = map[string]*cut{}
	}
	if len(cs.m) >= cs.sweepAt {
		for k, c := range cs.m {
			if !c.until.After(now) {
				cs.deleteLocked(k, c)
			}
		}
		if len(cs.m) >= maxIdleCuts {
			for k, c := range cs.m {
				if len(cs.m) < maxIdleCuts/2 {
					break
				}
				if !c.out && now.Sub(c.held) > cs.grace && hs.remaining(k, now) <= 0 {
					cs.deleteLocked(k, c)
				}
			}
		}
		// Twice the keys kept, so that sweeps cost constant time per key
		// cut; no more than the bound while the keys kept are fewer.
		cs.sweepAt = max(64, 2*len(cs.m))
		if len(cs.m) < maxIdleCuts {
			cs.sweepAt = min(cs.sweepAt, maxIdleCuts)
		}
	}
	cs.m[key] = &cut{until: until, held: held}
	cs.n.Add(1)
}

// heldUntil records that key, if it is cut, is held until held (a hold
// set by the answer to a request sent before the cut), unless its record
// says later already: see [cuts.extend].
func (cs *cuts) heldUntil(key string, held time.Time) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if c := cs.m[key]; c != nil && held.After(c.held) {
		c.held = held
	}
}

// deleteLocked takes key's cut c out of the map and wakes the requests
// waiting for its probe. cs.mu must be held.
func (cs *cuts) deleteLocked(key string, c *cut) {
	delete(cs.m, key)
	cs.n.Add(-1)
	c.wakeAllLocked()
}

// wakeAllLocked wakes every request waiting for c's probe. cs.mu must be
// held.
func (c *cut) wakeAllLocked() {
	for w := c.waiters.head; w != nil; w = c.waiters.head {
		c.unlink(w)
		w.wake()
	}
}

// enter gives a request of key its role at now: roleFree when key is not
// cut, or no longer (the wait the server announced has passed); roleHeld
// when it is, and held in hs (a hold is in force: the probe goes once it
// has passed); roleProbe, with the cut, when no probe is out; or else
// roleWait, with the cut and the time left until the end the server
// announced. It looks at the hold under cs.mu, after the probe's answer
// (see [cuts.answer]): a probe answered since has set its hold before, and
// the request waits for that hold rather than going as the next probe at
// once.
func (cs *cuts) enter(key string, now time.Time, hs *holds) (*cut, int, time.Duration) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.m[key]
	switch {
	case c == nil:
		return nil, roleFree, 0
	case !c.until.After(now):
		cs.deleteLocked(key, c)
		return nil, roleFree, 0
	case hs.remaining(key, now) > 0:
		return nil, roleHeld, 0
	case !c.out:
		c.out = true
		return c, roleProbe, 0
	}
	return c, roleWait, c.until.Sub(now)
}

// await has w wait for the answer of key's cut c's probe, and reports
// true, unless that probe has ended since [cuts.enter] (or c has): the
// caller enters again.
func (cs *cuts) await(key string, c *cut, w *probeWaiter) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.m[key] != c || !c.out {
		return false
	}
	c.push(w)
	return true
}

// leave ends w's wait for c's probe, in constant time, and reports whether
// w was handed the probe's role meanwhile (see [cuts.abort]): it must then
// go, or hand it on.
func (cs *cuts) leave(c *cut, w *probeWaiter) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if w.probe {
		return true
	}
	if w.queued {
		c.unlink(w)
	}
	return false
}

// abort ends c's probe without an answer (its context ended, its transport
// failed): the first request waiting for it becomes the probe, or, with
// none waiting, the next request to come. It does nothing on a nil cut.
func (cs *cuts) abort(c *cut) {
	if c == nil {
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	w := c.waiters.head
	if w == nil {
		c.out = false
		return
	}
	c.unlink(w)
	w.probe = true
	w.wake()
}

// answer ends c's probe, the server's answer read (see [Transport.observe]):
// when that answer asked for a wait longer than the Transport honours
// (renewed), the cut stands, renewed with the hold, and the next probe,
// which goes once that hold has passed, is the first request waiting (the
// one that arrived first), handed the role as by [cuts.abort], or, with
// none waiting, the next request to come; otherwise the server admits
// again, and key is no longer cut. Either way the requests waiting for
// the probe go on. It does nothing on a nil cut.
func (cs *cuts) answer(key string, c *cut, renewed bool) {
	if c == nil {
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c.out = false
	if cs.m[key] != c {
		c.wakeAllLocked()
		return
	}
	if !renewed {
		cs.deleteLocked(key, c)
		return
	}
	if w := c.waiters.head; w != nil {
		// The requests woken below wait for the hold, and would take the
		// role in whatever order the scheduler wakes them at its end.
		c.out = true
		c.unlink(w)
		w.probe = true
		w.wake()
	}
	c.wakeAllLocked()
}

// probe decides, once key's holds have passed and the request has its turn
// in the queue, whether it goes, while key is cut (see [cuts]): it goes
// when key is not cut, or no longer; it goes as the probe, with the cut,
// when no probe is out; or else it waits for the probe's answer, counting
// that wait in held, the time it has waited for the server's holds, which
// the maximum wait bounds. A request that cannot wait (held has reached the
// maximum wait) fails at once with a held [*WaitError], as does one whose
// maximum wait ends before the answer comes. It returns the cut when the
// request goes as the probe, and true (again) when key is held: by the
// hold the probe's answer set (renewing the cut or not), or, while key is
// cut, by one that a queued request's turn came during (a hold of
// rate-limit fields, which does not hold the queue otherwise). The request
// then waits for that hold, as any, and takes a new turn. With pacing, it
// returns true too when the request may go after it waited for the
// probe's answer while time passed: its turn has passed meanwhile, and it
// takes a new one. A request handed the probe's role while a hold is in
// force returns the cut and true: it keeps the role, waits for that hold,
// and goes as the probe (see [Transport.wait]); so does one handed the role
// with pacing after it waited while time passed, to take a new turn. *tk,
// when not nil, is the request's place at key's gate (without pacing, see
// [Transport.wait]): probe gives it up, and sets *tk to nil, once the
// request has its role or is among the waiters for the probe's answer, so
// that the requests behind take theirs after it; a request that is to wait
// for a hold keeps it. A place given up is no longer the request's: a
// request that comes to wait for a hold again takes a new one, and none
// waits on the old (a retry that arrived before may have come to the gate
// ahead of it meanwhile, and that place is then ready never).
func (t *Transport) probe(ctx context.Context, key string, seq uint64, tk **ticket, held *time.Duration) (*cut, bool, error) {
	// late: the request waited for a probe's answer while time passed, its
	// turn in the queue with it.
	late := false
	for {
		now := t.clock.Now()
		if hook := probeEnterHook.Load(); hook != nil {
			(*hook)()
		}
		c, role, left := t.cuts.enter(key, now, &t.holds)
		if role != roleHeld && role != roleWait {
			(*tk).leave()
			*tk = nil
		}
		switch role {
		case roleFree:
			// With pacing, a request whose turn passed while it waited
			// takes a new one: the requests that waited for the probe's
			// answer would otherwise all leave at once when it came.
			return nil, late && t.limiter != nil, nil
		case roleHeld:
			// A hold from rate-limit fields leaves a queued request its
			// turn (see [WithProactive]), but not while key is cut: the
			// server said no for longer.
			return nil, true, nil
		case roleProbe:
			return c, false, nil
		}
		budget := t.maxWait - *held
		if budget <= 0 {
			return nil, false, &WaitError{Key: key, Wait: *held + left, MaxWait: t.maxWait, Held: true}
		}
		sctx, cancel := context.WithCancel(ctx)
		w := &probeWaiter{wake: cancel, seq: seq}
		if !t.cuts.await(key, c, w) {
			cancel()
			continue
		}
		(*tk).leave()
		*tk = nil
		// Woken by the probe's answer, by its role handed on, or by the
		// end of the server's wait; or the maximum wait has come, or ctx
		// has ended: the leave below and ctx tell which.
		_ = t.clock.Sleep(sctx, min(budget, left))
		w.wake()
		waited := t.clock.Now().Sub(now)
		*held += waited
		late = late || waited > 0
		if t.cuts.leave(c, w) {
			if err := ctx.Err(); err != nil {
				t.cuts.abort(c)
				return nil, false, err
			}
			if t.holds.remaining(key, t.clock.Now()) > 0 {
				// Handed the role while a hold set meanwhile (by the
				// answer of a request sent before the cut) is in force:
				// the request keeps the role, and goes as the probe once
				// that hold has passed.
				return c, true, nil
			}
			// With pacing, a request whose turn passed while it waited
			// keeps the role and takes a new turn, as one the answer
			// lets go does: the probe it follows may have left an
			// instant ago, at a later turn than its own.
			return c, late && t.limiter != nil, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, false, err
		}
		if t.holds.remaining(key, t.clock.Now()) > 0 {
			// The probe's answer set a hold, renewing the cut or not.
			return nil, true, nil
		}
	}
}

// probeEnterHook, set by tests, runs as a request of a cut key is about to
// take its role there.
var probeEnterHook atomic.Pointer[func()]

// send sends r through the next RoundTripper. c, when not nil, is the cut
// r probes: a probe that ends without a response (an error, a panic) hands
// its role on (see [cuts.abort]); the caller gives the answer of one that
// has a response, or, refused without a wait, keeps the role for the
// request's retry (see [Transport.RoundTrip]).
func (t *Transport) send(r *http.Request, c *cut) (*http.Response, error) {
	if c == nil {
		return t.next.RoundTrip(r)
	}
	answered := false
	defer func() {
		if !answered {
			t.cuts.abort(c)
		}
	}()
	resp, err := t.next.RoundTrip(r)
	answered = err == nil && resp != nil
	return resp, err
}
