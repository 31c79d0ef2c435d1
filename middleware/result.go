package middleware

import (
	"sync/atomic"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware/internal/resultfields"
	"github.com/ratekeeper/ratekeeper/policy"
)

// init gives the packages under middleware (and no one else) the fields
// of a Result to write: see package resultfields.
func init() {
	resultfields.Set(resultfields.Fields[*Result](func(res *Result) (*policy.Result, *bool, *error) {
		return &res.pr, &res.fallback, &res.err
	}))
}

// A Result is the rate-limit decision for one request, as handlers
// downstream of the middleware see it through [FromContext] (and the deny
// handler, the reject handler, the shadow report and the [Observer] are
// handed it): the policies that applied and their decisions (see
// [policy.Result], whose readers it offers with the same meaning), and
// how the middleware reached them ([Result.Shadow], [Result.Fallback],
// [Result.Err], [Result.StoreFailed]).
//
// A Result is read-only. The middleware decided the request before any
// of that code runs, and goes on using its Result after: it gives back or
// refunds the request's units, writes the rate-limit headers, picks the
// store to give back to, and reports the request to the observers and the
// log from it; a middleware nested further in reads it to leave out what
// this one counted. So the methods of policy.Result that change it (Take,
// Peek, Refund, GiveBack, Reset) are not offered: called on the Result of
// a request already decided, they would count it again or change what is
// given back and reported. And the facts the middleware reads back
// (Shadow, Fallback, Err) are methods, not fields a hook could write.
//
// With [WithoutContext] the Result is recycled after the request: see
// there.
type Result struct {
	// pr is the evaluation of the policies: package middleware alone
	// prepares, takes, refunds and gives it back.
	pr policy.Result
	// shadow reports whether the middleware is in dry-run mode (see
	// Shadow).
	shadow bool
	// fallback reports whether the decisions came from the fallback store
	// (see Fallback).
	fallback bool
	// wrote is 1 + the profile of the headers written; 0 for none (no
	// decision, no policy evaluated, NoHeaders, or a single-valued
	// profile's values left as an outer middleware wrote them). A byte
	// beside the bools, where it takes no room of its own.
	wrote uint8
	// marks holds markStoreFailed, markMost and markCounting. A byte
	// beside wrote.
	marks uint8
	// outerWait is the wait of the middlewares further out (see
	// outerWait) for a denied request, in whole seconds, rounded up (at
	// most 136 years): its 429 waits at least that long. It fits the
	// padding after the bools, where a Duration would not fit the
	// request's size class (see TestResultContextSizeClass).
	//
	// A request served by serveCounted (markCounting) is admitted, and
	// has no such wait: on its Result the word holds instead whether a
	// middleware further in answered the request itself (see refusing,
	// refusedFurtherIn). That middleware may run on a goroutine of its
	// own (a handler between the two that serves the rest of the chain
	// on one and answers without waiting for it, as http.TimeoutHandler
	// does once its time is up): the mark is written and read with
	// atomic operations, and is the only part of the Result written once
	// the request was passed on.
	outerWait uint32
	// err is the failure the middleware met, if any (see Err).
	err error
}

// The bits of Result.marks.
const (
	// markStoreFailed is set when the middleware counts a failure of its
	// store call for the request (see StoreFailed).
	markStoreFailed uint8 = 1 << iota
	// markMost is set when the middleware writes its IETF RateLimit line
	// with the most constraining member only (IETFMostConstraining, its
	// own or that of the middleware further out whose profile it writes
	// in): a middleware further in reads it as the profile.
	markMost
	// markCounting is set on the Result of a request served by
	// serveCounted, the only one whose refusal further in is read
	// (refusedFurtherIn), before it is passed on: refusing marks no other
	// Result, which a goroutine of the shadow report or of a handler may
	// be reading.
	markCounting
)

// refuseFurtherIn marks res, the Result of a request served by
// serveCounted (markCounting), as answered by a middleware further in
// (see refusing), which may run on another goroutine than res's
// middleware (see Result.outerWait).
func (res *Result) refuseFurtherIn() { atomic.StoreUint32(&res.outerWait, 1) }

// refusedFurtherIn reports whether a middleware further in marked res,
// the Result of a request served by serveCounted, as answered by itself
// (see refuseFurtherIn).
func (res *Result) refusedFurtherIn() bool { return atomic.LoadUint32(&res.outerWait) != 0 }

// StoreFailed reports whether the middleware counted the store call that
// was to decide the request as failed, as one of Stats.StoreErrors: the
// store returned an error (its backend failed, the breaker refused the
// call, the store was closed or refused the check) or a decision the
// policy cannot give, whether or not a fallback store then decided it
// ([Result.Fallback]). It is false for a call that the request's own end
// cut short (its client gone, or a deadline that gave the backend no fair
// chance; see [WithBreaker]). A request reported as [Abandoned] can have
// it: its deadline, far enough off, ran out while the backend hung, a
// failure of the backend as well as a request not served.
func (res *Result) StoreFailed() bool { return res.marks&markStoreFailed != 0 }

// RetryAfter returns, for a denied request, how long the client should
// wait: the Retry-After of the default 429 before it is rounded up to
// whole seconds. That is the longest RetryAfter among the violated
// policies, never less than their NextAfter ([policy.Result.RetryAfter]),
// and never less than the middlewares further out would refuse the retry
// for (their wait in whole seconds, rounded up): one that admitted the
// request with its last units waits for them to grow. It is 0 when
// allowed. In shadow mode, which refuses nothing, it is the policies' wait
// alone.
func (res *Result) RetryAfter() time.Duration {
	if res.marks&markCounting != 0 {
		// Admitted, and served: its outerWait holds a mark (see
		// refusedFurtherIn), not a wait.
		return res.pr.RetryAfter()
	}
	return max(res.pr.RetryAfter(), time.Duration(res.outerWait)*time.Second)
}

// Shadow reports whether the middleware is in dry-run mode
// ([WithShadow]): it lets the request through whatever its decisions;
// Allowed still reports whether the policies admitted it.
func (res *Result) Shadow() bool { return res.shadow }

// Fallback reports whether the decisions came from the fallback store
// ([FallBack]): the store failed (see [Result.Err]).
func (res *Result) Fallback() bool { return res.fallback }

// Err returns the failure the middleware met, if any: the store's error
// (then the request passed unlimited, or was refused, or was decided by
// the fallback store: see [Result.Fallback]), or the *policy.KeyError or
// *policy.CostError of a request refused for it (as the reject and deny
// handlers and the observer see it) or, in shadow mode, let through.
func (res *Result) Err() error { return res.err }

// The readers of policy.Result, with the meaning their comments in
// package policy give them (the decisions a middleware nested in another
// reports are its own merged with those of the middlewares further out).

// Len returns the number of policies evaluated (applicable, with a key);
// the index i of the other readers runs from 0 to Len-1
// ([policy.Result.Len]).
func (res *Result) Len() int { return res.pr.Len() }

// Policy returns the i-th evaluated policy, in Set order
// ([policy.Result.Policy]).
func (res *Result) Policy(i int) *policy.Policy { return res.pr.Policy(i) }

// Key returns the key the i-th policy was checked under, namespaced by the
// policy's name ("per-ip:192.0.2.1"; [policy.Result.Key]). With
// [WithoutContext] it is overwritten by a later request: see there.
func (res *Result) Key(i int) string { return res.pr.Key(i) }

// Cost returns the cost the i-th policy was charged, if allowed
// ([policy.Result.Cost]).
func (res *Result) Cost(i int) int64 { return res.pr.Cost(i) }

// Decision returns the i-th policy's decision; the zero Decision when the
// request was not decided (see [Result.Taken]; [policy.Result.Decision]).
func (res *Result) Decision(i int) algorithms.Decision { return res.pr.Decision(i) }

// Allowed reports whether every decision allowed the request (true for a
// decided Result with no policies, false for a request not decided: see
// [Result.Taken]; [policy.Result.Allowed]). In shadow mode a request let
// through may not be allowed.
func (res *Result) Allowed() bool { return res.pr.Allowed() }

// Delay returns the longest Delay among the decisions: how long a
// leaky_queue policy asked the middleware to hold the request
// ([policy.Result.Delay]).
func (res *Result) Delay() time.Duration { return res.pr.Delay() }

// Lowest returns the index of the decision that single-valued headers
// report, or -1 when there is no decision ([policy.Result.Lowest]).
func (res *Result) Lowest() int { return res.pr.Lowest() }

// AboveLimit reports whether the request's cost is above the i-th
// policy's capacity in force but within its configured one: the policy's
// limit is lowered ([Middleware.SetLimit], package middleware/adaptive),
// and the request is denied until it is back, consuming nothing
// ([policy.Result.AboveLimit]).
func (res *Result) AboveLimit(i int) bool { return res.pr.AboveLimit(i) }

// Taken reports whether the Result holds decisions: the store decided the
// request (or the fallback store did, or [Middleware.Peek] read them: see
// [Result.Peeked]). It is false for a request let through unlimited after
// a store failure, or refused before a decision (see [Result.Err];
// [policy.Result.Taken]).
func (res *Result) Taken() bool { return res.pr.Taken() }

// Peeked reports whether the decisions are a peek's ([Middleware.Peek]):
// they consumed nothing ([policy.Result.Peeked]).
func (res *Result) Peeked() bool { return res.pr.Peeked() }

// Refunded reports whether the middleware gave back the queue places of a
// request it held and did not serve, and the store reported the queues
// after it: the decisions are then those reports
// ([policy.Result.Refunded]).
func (res *Result) Refunded() bool { return res.pr.Refunded() }

// GaveBack reports whether the middleware gave back the units of a
// response that does not count ([policy.CountIf]); the decisions of
// the policies given back are then the store's reports after it
// ([policy.Result.GaveBack]). The middleware gives back after the handler
// returns: the observers see it, the handler does not.
func (res *Result) GaveBack() bool { return res.pr.GaveBack() }

// Given reports whether the i-th policy's queue place came back when the
// middleware refunded the request, or some of its units when it gave them
// back ([policy.Result.Given]).
func (res *Result) Given(i int) bool { return res.pr.Given(i) }

// Mask returns the policies evaluated, as a mask over [Result.Set]
// ([policy.Result.Mask]).
func (res *Result) Mask() uint64 { return res.pr.Mask() }

// SkippedMask returns the policies that applied but were left out because
// their key could not be extracted ([policy.SkipPolicy];
// [policy.Result.SkippedMask]).
func (res *Result) SkippedMask() uint64 { return res.pr.SkippedMask() }

// Set returns the Set the request was evaluated against: the middleware's
// at the time, which [Middleware.SetLimit] or a reload may have replaced
// since ([policy.Result.Set]; nil for a Result never prepared).
func (res *Result) Set() *policy.Set { return res.pr.Set() }
