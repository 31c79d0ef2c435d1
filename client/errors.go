package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Errors matched with errors.Is.
var (
	// ErrWaitTooLong is matched by every *WaitError: a request would have
	// waited longer than the maximum wait for its turn, or past its
	// context's deadline.
	ErrWaitTooLong = errors.New("client: wait exceeds the maximum")
	// ErrGaveUp is matched by every *RetryError: the server kept answering
	// 429, 503 or 529 (or a rate-limited 403) and the Transport stopped
	// retrying.
	ErrGaveUp = errors.New("client: gave up retrying")
)

// A WaitError reports a request refused before it was sent because it would
// have waited longer than the maximum wait (see [WithMaxWait]), or because
// its turn or the server's hold would end only after its context's deadline
// (Deadline; as x/time/rate's Limiter.Wait, the request fails at once rather
// than wait for the deadline to pass). Nothing was sent (for a retry,
// nothing more than the earlier attempts), and a request refused its turn in
// the queue took nothing from it (one that a server's Retry-After pushed
// back leaves its turn to the requests behind it): the request can be tried
// again later, when the queue is shorter or the server's hold has passed. A
// retry refused so ends as a give-up instead, or as this error when the last
// refusal's body could not be kept (see [Transport.RoundTrip]).
type WaitError struct {
	// Key is the pacing key of the request (by default the URL's host).
	Key string
	// Wait is how long the request would have had to wait.
	Wait time.Duration
	// MaxWait is the maximum wait the Transport was configured with (for
	// the Retry-After of a redirect, the smaller of it and
	// [WithMaxRetryAfter]: see [Transport.RoundTrip]).
	MaxWait time.Duration
	// Held reports whether the wait was a hold the server asked for
	// (Retry-After, or a RateLimit header with no quota left), or the
	// answer of the probe a hold cut short awaits (see [WithProactive]),
	// rather than the request's turn in the Transport's own queue. For
	// the probe's answer, Wait is the time the request had waited for
	// holds and answers, plus the time left until the end of the wait the
	// server announced.
	Held bool
	// Deadline reports that the wait would have outlasted the request's
	// context deadline (compared in real time, whatever the Transport's
	// Clock), within the maximum wait or not. Such a WaitError also
	// matches context.DeadlineExceeded with errors.Is, and its Timeout
	// method reports true, as net/http's own timeouts do.
	Deadline bool
}

// Error names the key, the wait, what the request would have waited for,
// and the bound it exceeds (the maximum wait or the context's deadline).
func (e *WaitError) Error() string {
	what := "its turn in the queue"
	if e.Held {
		what = "the server's hold to pass"
	}
	if e.Deadline {
		return fmt.Sprintf("client: request to %q would wait %s for %s, past its context deadline", e.Key, e.Wait, what)
	}
	return fmt.Sprintf("client: request to %q would wait %s for %s, more than the maximum wait %s", e.Key, e.Wait, what, e.MaxWait)
}

// Is reports whether target is ErrWaitTooLong, or context.DeadlineExceeded
// when the wait would have outlasted the context's deadline.
func (e *WaitError) Is(target error) bool {
	return target == ErrWaitTooLong || (e.Deadline && target == context.DeadlineExceeded)
}

// Timeout reports whether the wait would have outlasted the request's
// context deadline (see Deadline): an http.Client's *url.Error then reports
// a timeout too.
func (e *WaitError) Timeout() bool { return e.Deadline }

// A RetryError reports that the Transport gave up on a request the server
// kept answering with 429 Too Many Requests, 503 Service Unavailable or 529
// (overloaded). It is
// returned only with [WithGiveUpError]; by default the Transport returns the
// last response itself, as an http.Client user expects.
type RetryError struct {
	// Attempts is the number of times the request was sent.
	Attempts int
	// LastStatus is the status code of the last response (429, 503, 529, or a
	// rate-limited 403).
	LastStatus int
	// RetryAfter is the wait the last response asked for in its
	// Retry-After header (or retry-after-ms, x-ms-retry-after-ms,
	// X-Rate-Limit-Retry-After-Seconds); 0 when
	// it had none (or an invalid one).
	RetryAfter time.Duration
	// Reason says why the Transport stopped: "retries exhausted",
	// "Retry-After exceeds the maximum", "rate-limit reset exceeds the
	// maximum" (no Retry-After asking for a wait, and the rate-limit
	// fields announce a reset beyond it), "request costs more than the server's quota"
	// (its rate-limit fields say so: see [Transport.RoundTrip]),
	// "request cannot be replayed",
	// "retry would come after the context deadline", or "retry would wait
	// too long" (for its turn in the queue or a server's hold: see Err).
	Reason string
	// Err is the error that ended the retries, when one did: the
	// [*WaitError] of a retry that would have waited too long. RetryError
	// unwraps to it.
	Err error
}

// Error names the attempts, the Reason and the last status (its code, and
// its text when it has one: 529 is "overloaded").
func (e *RetryError) Error() string {
	attempts := "attempts"
	if e.Attempts == 1 {
		attempts = "attempt"
	}
	status := fmt.Sprint(e.LastStatus)
	switch text := http.StatusText(e.LastStatus); {
	case text != "":
		status += " " + text
	case e.LastStatus == statusOverloaded:
		status += " overloaded" // Anthropic's; net/http has no text for it
	}
	return fmt.Sprintf("client: gave up after %d %s (%s): last status %s",
		e.Attempts, attempts, e.Reason, status)
}

// Is reports whether target is ErrGaveUp, or context.DeadlineExceeded when
// the Transport gave up because the retry would have come after the
// context's deadline (whichever wait, the server's or the retry's turn,
// would have outlasted it), as a [*WaitError] for the deadline does.
func (e *RetryError) Is(target error) bool {
	return target == ErrGaveUp || (e.Reason == reasonDeadline && target == context.DeadlineExceeded)
}

// Timeout reports whether the Transport gave up because the retry would
// have come after the context's deadline: an http.Client's *url.Error then
// reports a timeout too, as for a [*WaitError] for the deadline.
func (e *RetryError) Timeout() bool { return e.Reason == reasonDeadline }

// Unwrap returns Err.
func (e *RetryError) Unwrap() error { return e.Err }

// Reasons a RetryError gives.
const (
	reasonExhausted = "retries exhausted"
	reasonTooLong   = "Retry-After exceeds the maximum"
	// reasonResetTooLong: no Retry-After asking for a wait, and the
	// rate-limit fields announce a reset beyond WithMaxRetryAfter.
	reasonResetTooLong = "rate-limit reset exceeds the maximum"
	reasonNoReplay     = "request cannot be replayed"
	// reasonNeverFits: the refusal's fields say the request costs more
	// than the server's quota (see neverFits).
	reasonNeverFits = "request costs more than the server's quota"
	reasonDeadline  = "retry would come after the context deadline"
	reasonNoTurn    = "retry would wait too long"
)
