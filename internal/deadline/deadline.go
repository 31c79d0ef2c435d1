// Package deadline holds the circuit breakers' deadline rule: when a call
// to a backend that ended at its caller's deadline counts as a failure of
// the backend. The middleware's breaker (middleware.WithBreaker) and the
// Redis store's (redisstore.WithCircuitBreaker) both follow it.
//
// A call whose caller cancelled it never counts, whatever the backend was
// doing. A call that reached its caller's deadline counts only when the
// backend had a fair chance to answer it: the call began at least [Budget]
// before that deadline, and no call of the same backend got a reply while
// it waited. A deadline already near when the call began would have passed
// with a healthy backend too, and a reply to another call shows the backend
// answering (the deadline was short for the load, as in a burst). A backend
// that answers nothing for that long is failing, whoever's deadline ends
// the calls. (A call that meets a closed store says nothing of the backend
// either; the breakers tell that error apart themselves, as it is no end
// of a context.)
package deadline

import (
	"context"
	"sync/atomic"
	"time"
)

// Budget is the least time before its caller's deadline that a call must
// begin with for the deadline, if the call reaches it, to count as a
// failure of the backend: a hundred round trips to a Redis in the same
// region, several tens of one under load.
const Budget = 50 * time.Millisecond

// A Ticket is what [Calls] gave a call when it began: its place among the
// calls, for [Calls.Ignores] to tell whether a reply came since. The zero
// Ticket is a call whose deadline never counts ([Calls.Watch]).
type Ticket uint64

// near marks the ticket of a call begun less than Budget before its
// caller's deadline: the deadline never counts, and the ticket is still
// told apart from every other.
const near Ticket = 1 << 63

// Calls orders the calls to one backend and the backend's replies. Its
// zero value is ready to use, and it is safe for concurrent use.
type Calls struct {
	begun   atomic.Uint64 // the tickets given: each call's is the next
	replied atomic.Uint64 // begun when the backend last replied

	// now reads the clock that deadlines are on; nil: the system clock,
	// as for every context deadline. Tests set it.
	now func() time.Time
}

// near reports whether ctx's deadline is less than Budget away, and
// whether it has one at all; the clock is read only when it has.
func (c *Calls) near(ctx context.Context) (near, has bool) {
	dl, ok := ctx.Deadline()
	if !ok {
		return false, false
	}
	now := c.now
	if now == nil {
		now = time.Now
	}
	return dl.Sub(now()) < Budget, true
}

// Begin returns the ticket of a call on ctx that begins now: a new one,
// unequal to every other Begin's, which a breaker may also use to know its
// probe by.
func (c *Calls) Begin(ctx context.Context) Ticket {
	t := Ticket(c.begun.Add(1))
	if n, _ := c.near(ctx); n {
		t |= near
	}
	return t
}

// Watch is Begin for a breaker that needs a ticket only when the call's
// deadline can count: it returns the zero Ticket, having only read ctx's
// deadline (and, when there is one, the clock), when ctx has no deadline
// or one less than Budget away.
func (c *Calls) Watch(ctx context.Context) Ticket {
	if n, has := c.near(ctx); n || !has {
		return 0
	}
	return Ticket(c.begun.Add(1))
}

// Replied notes a reply of the backend to a call (a success, or an error
// the backend answered with): every call begun before it saw a reply while
// it waited. It writes only when a call has begun since the last reply it
// noted.
func (c *Calls) Replied() {
	for b := c.begun.Load(); b != 0; {
		r := c.replied.Load()
		if r >= b || c.replied.CompareAndSwap(r, b) {
			return
		}
	}
}

// Ignores reports whether the end of the call of ticket t, whose caller's
// context ended with ended (the context's Err, exactly: context.Canceled
// or context.DeadlineExceeded), says nothing of the backend: the caller
// cancelled it, or it reached a deadline that does not count (see the
// package documentation). Any other ended, nil included, is no end of the
// caller's context, and Ignores reports false.
func (c *Calls) Ignores(t Ticket, ended error) bool {
	switch ended {
	case context.Canceled:
		return true
	case context.DeadlineExceeded:
		return t == 0 || t&near != 0 || c.replied.Load() >= uint64(t)
	}
	return false
}
