package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/deadline"
	"github.com/redis/go-redis/v9"
)

// WithCircuitBreaker stops sending to a failing Redis: after failures
// consecutive failed calls, every call returns [ErrCircuitOpen] at once for
// cooldown; then one call is let through as a probe, and its success closes
// the circuit (its failure opens it for another cooldown). The breaker
// reads the injected clock when there is one ([WithClock]). On a Cluster
// it is one breaker for every node: a master that fails with no replica
// to take over opens it with the failures of its keys' calls, and then
// the calls of keys the other masters serve return ErrCircuitOpen too,
// until a probe succeeds (TestClusterBreakerIsOneForEveryNode).
//
// A failed call is one Redis did not answer in the time the store gives
// it: an error of the client (a refused connection, its read timeout, a
// full pool) or of the server, or no reply within the store's timeout
// ([DefaultTimeout], or [WithTimeout]'s). Calls
// whose caller ended them are told apart, since in the middleware every
// call runs on a request's context, which its client ends:
//
//   - A call its caller cancelled (context.Canceled: the client went away)
//     never counts, whatever Redis was doing.
//   - A call that reached its caller's deadline, not the store's timeout,
//     counts only when Redis had a fair chance to answer it: the call began
//     at least 50 ms before that deadline, and no call of the store got a
//     reply from Redis while it waited. A deadline already near when the
//     call began would have passed with a healthy Redis too, and a reply to
//     another call shows Redis answering (the caller's deadline was short
//     for the load, as in a burst). A Redis that answers nothing for that
//     long is failing, whoever's deadline ends the calls.
//
// Such calls count neither as failures nor as successes; a half-open probe
// that ends so lets the next call probe. Nor does the failure of a call let
// through before the circuit last opened count once a success closed it
// again (a call whose outage outlasted the cooldown): it is old news of a
// Redis that has answered since. So callers leaving, or short
// deadlines in a burst, never open the circuit while Redis answers, and a
// Redis that stops answering opens it whether the store's timeout or the
// callers' deadlines end its calls. An error Redis replied about one key's
// value (of another type, or not written by the store: see Failures in the
// package doc) counts as the reply it is, Redis being up: one bad key does
// not open the circuit for every client. So does Redis's refusal of a call
// while its slot migrates (TRYAGAIN, or ASK to a client that follows no
// redirection), and the failure of a cross-slot undo that must note a
// give-back then (see Cluster in the package doc): a reshard does not
// open the circuit for the slots it leaves alone
// (TestClusterBreakerClosedWhileSlotMigrates). A call that meets a closed store
// ([Store.Close]) does not count, nor does one that panics (in a hook of
// the client's, say): a probe that ends so lets the next call probe.
func WithCircuitBreaker(failures int, cooldown time.Duration) Option {
	return func(s *Store) error {
		if failures < 1 {
			return fmt.Errorf("redisstore: WithCircuitBreaker: Failures must be at least 1, got %d", failures)
		}
		if cooldown <= 0 {
			return fmt.Errorf("redisstore: WithCircuitBreaker: Cooldown must be positive, got %s", cooldown)
		}
		s.breaker = &breaker{threshold: failures, cooldown: cooldown}
		return nil
	}
}

// minDeadlineBudget is the least time before its caller's deadline that a
// call must begin with for the deadline, if it passes, to count as a
// failure of Redis (see WithCircuitBreaker).
const minDeadlineBudget = deadline.Budget

// breaker is a consecutive-failure circuit breaker.
type breaker struct {
	mu        sync.Mutex
	threshold int
	cooldown  time.Duration
	failures  int             // consecutive failures while closed
	open      bool            // open or half-open
	until     time.Time       // open: when the next probe may go
	probing   bool            // half-open: a probe is in flight
	probe     deadline.Ticket // the ticket of the last probe let through
	// opens counts the times the circuit opened: a call's ticket holds
	// its value when the call was let through, by which record knows the
	// calls let through before the circuit last opened.
	opens uint64
	// calls gives each call let through its ticket, by which record knows
	// the probe and tells whether its caller's deadline counts.
	calls deadline.Calls
}

// A ticket is what the breaker gives each call it lets through, and takes
// back with the call's outcome: the call's place among the calls
// (deadline.Calls), and how many times the circuit had opened by then.
type ticket struct {
	call  deadline.Ticket
	opens uint64
}

// allow is allowCtx for a call without a deadline.
func (b *breaker) allow(now time.Time) (ticket, error) {
	return b.allowCtx(now, context.Background())
}

// allowCtx returns ErrCircuitOpen when the call on ctx must not go to
// Redis, and otherwise the call's ticket, which record takes back.
func (b *breaker) allowCtx(now time.Time, ctx context.Context) (ticket, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open {
		if now.Before(b.until) || b.probing {
			return ticket{}, ErrCircuitOpen
		}
		b.probing = true // this call is the probe
		b.probe = b.calls.Begin(ctx)
		return ticket{b.probe, b.opens}, nil
	}
	return ticket{b.calls.Begin(ctx), b.opens}, nil
}

// record counts the outcome err of the call whose ticket is tk (see
// WithCircuitBreaker). A bare context error is the caller's context ending
// (the store's own timeout is wrapped: see Store.ownDeadline). While the
// circuit is open only the probe's failure counts: a call let through
// before the circuit opened that fails now says nothing new, and must not
// end the probe still in flight (which would let a second one through).
// Nor, once a success closed the circuit again, does such a call's
// failure count (its outage can outlast the cooldown: a store timeout
// longer than it, go-redis redialing): Redis answered since, and the
// circuit must not open again for another cooldown on old news.
func (b *breaker) record(err error, now time.Time, tk ticket) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := tk.call
	isProbe := b.probing && t == b.probe
	if err == nil || keyError(err) || errors.Is(err, algorithms.ErrTryAgain) { // marked by markKeyState
		b.calls.Replied()
		b.failures, b.open, b.probing = 0, false, false
		return
	}
	if errors.Is(err, algorithms.ErrClosed) || b.calls.Ignores(t, err) {
		if isProbe {
			b.probing = false
		}
		return
	}
	if b.open {
		if isProbe {
			b.probing = false
			b.until = now.Add(b.cooldown)
		}
		return
	}
	if tk.opens != b.opens {
		return // let through before the circuit last opened
	}
	b.failures++
	if b.failures >= b.threshold {
		b.open, b.until, b.probing = true, now.Add(b.cooldown), false
		b.opens++
	}
}

// unwound hands the probe on, as record does for a call that says nothing
// of Redis, when the call of tk ends without record having its outcome
// (recorded false: a panic, or runtime.Goexit, on the caller's
// goroutine). Deferred by each call the breaker lets through, it keeps
// such a probe from standing in flight for good, which kept the circuit
// open for every later call.
func (b *breaker) unwound(tk ticket, recorded *bool) {
	if *recorded {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.probing && tk.call == b.probe {
		b.probing = false
	}
}

// foreignMark is in the error the store's scripts raise on a value they did
// not write (lua/fastlib.lua); a key cannot spell it, its spaces escaped.
const foreignMark = " holds a value the store did not write"

// keyError reports whether err is an error Redis replied about the value
// of one key: WRONGTYPE, or a value the store did not write. Redis
// answered; the key is at fault, not the server. For a cross-slot Take
// whose undo failed too (leftError), the Take's own error decides.
func keyError(err error) bool {
	if le, ok := err.(*leftError); ok {
		err = le.err
	}
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	msg := re.Error()
	return strings.HasPrefix(msg, "WRONGTYPE") || strings.Contains(msg, foreignMark)
}

// notelessMark is in the error of a cross-slot undo that must note a
// give-back while its slot migrates, its call naming no note key
// (lua/cluster.lua's NOTELESS).
const notelessMark = "its call names no note key (the slot migrating)"

// migrating reports whether err is Redis's answer to a call while its
// slot migrates: a refusal to run it there (slotMigrating), or a
// cross-slot undo's failure for want of its note key (notelessMark).
// Redis answered. For a cross-slot Take whose undo failed too
// (leftError), the Take's own error decides, as for keyError; for one
// whose undos failed (errors.Join), each of theirs must be such.
func migrating(err error) bool {
	if le, ok := err.(*leftError); ok {
		err = le.err
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !migrating(e) {
				return false
			}
		}
		return true
	}
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	return slotMigrating(err) || strings.Contains(re.Error(), notelessMark)
}

// keyStateError is an error Redis replied about the value of one key (see
// keyError), matching algorithms.ErrKeyState as well as the error it holds:
// a caller's own circuit breaker, which cannot read Redis's replies, tells
// it from a failure of Redis by it.
type keyStateError struct{ err error }

func (e *keyStateError) Error() string   { return e.err.Error() }
func (e *keyStateError) Unwrap() []error { return []error{e.err, algorithms.ErrKeyState} }

// tryAgainError is Redis's answer to a call while its slot migrates (see
// migrating), matching algorithms.ErrTryAgain as well as the error it
// holds: a caller's own circuit breaker tells it from a failure of Redis
// by it, as the store's does.
type tryAgainError struct{ err error }

func (e *tryAgainError) Error() string   { return e.err.Error() }
func (e *tryAgainError) Unwrap() []error { return []error{e.err, algorithms.ErrTryAgain} }

// markKeyState returns err, marked as matching algorithms.ErrKeyState when
// it is an error Redis replied about the value of one key, or
// algorithms.ErrTryAgain when it is Redis's answer while a slot migrates.
func markKeyState(err error) error {
	switch {
	case err == nil:
		return nil
	case keyError(err):
		return &keyStateError{err}
	case migrating(err):
		return &tryAgainError{err}
	}
	return err
}
