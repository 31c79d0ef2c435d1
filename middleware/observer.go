package middleware

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/errlist"
	"github.com/ratekeeper/ratekeeper/internal/nilness"
	"github.com/ratekeeper/ratekeeper/policy"
)

// An Observer is told what the middleware does: the outcome of every
// request it evaluates, changes of its failure [State], and changes of the
// effective limit of a policy. It is the hook for metrics and logs (see
// [NewLogObserver], and package middleware/prommetrics for Prometheus);
// the middleware itself imports no metrics library. One made to be shared
// by several middlewares, as the metrics are, is a [SharedObserver].
//
// Methods are called synchronously on the request's goroutine (or the
// goroutine changing the limits), so they must be safe for concurrent use,
// must not block, and should not allocate per call. ObserveLimit is called
// while the middleware's rule set is being replaced, under the lock of
// its writers: it must not call [Middleware.SetPolicies],
// [Middleware.ApplyConfig], [Middleware.SetLimit],
// [Middleware.SetLimitUnguarded], [Middleware.Configured] or
// [Middleware.Close], which take that lock (the policies it may read are
// in [Middleware.Set], which takes none).
// ObserveState is called under the lock that orders the changes of State,
// which Close takes too: it must not call Close.
//
// Without an observer ([WithObserver] not used) the middleware pays one nil
// check per request.
type Observer interface {
	// ObserveRequest is called once per evaluated request, when the
	// decision is made, before the handler runs; for a request held for a
	// leaky_queue Delay, when the hold ends (before the handler runs),
	// since only then is it known whether the request is served.
	ObserveRequest(Event)
	// ObserveState is called when the store's answers move the middleware
	// from one failure State to another.
	ObserveState(from, to State)
	// ObserveLimit is called when a policy's effective limit is set: for
	// every policy when the rule set is first built; when it is replaced,
	// for every policy that is new or whose effective or configured limit
	// changed; and whenever [Middleware.SetLimit] or
	// [Middleware.SetLimitUnguarded] changes it (switching the guard alone
	// changes no limit); never once
	// the middleware is closed ([Middleware.Close]). configured is the
	// limit of the policy as given; limit is the one enforced. Both count
	// requests per the policy's Window, which a [PolicyObserver] is told.
	ObserveLimit(policy string, limit, configured int64)
}

// A RemovalObserver is an [Observer] that is also told when a policy
// leaves the rule set (a reload or [Middleware.SetPolicies] dropped it), so
// that it can forget what it keeps per policy: [prommetrics] deletes the
// policy's limit gauges, [LogObserver] its sampling state. The middleware
// checks for it with a type assertion; an Observer without it is told
// nothing. Like ObserveLimit, it is called while the rule set is being
// replaced.
//
// [prommetrics]: https://pkg.go.dev/github.com/ratekeeper/ratekeeper/middleware/prommetrics
type RemovalObserver interface {
	Observer
	ObservePolicyRemoved(policy string)
}

// A PolicyObserver is an [Observer] that is also told each policy's
// [algorithms.Spec] as configured (the policy as given, before any
// [Middleware.SetLimit]): its algorithm, burst, buckets or MaxDelay, and
// above all its Window, which the limits of ObserveLimit count requests
// in. [prommetrics] and otelmetrics report each policy's window beside
// its limits. It is called for every policy when the rule set is first
// built, before any request; when the rule set is replaced, for every
// policy that is new or whose configured Spec changed (its Window alone,
// say, which leaves its limits, and so ObserveLimit, alone); and never once
// the middleware is closed ([Middleware.Close]). [Middleware.SetLimit]
// and [Middleware.SetLimitUnguarded] change no configured Spec: they
// call ObserveLimit alone. For a policy whose limits are told too,
// ObservePolicy comes first, so that an observer has the policy's Spec
// when its limits come. Like ObserveLimit, it is called while the rule
// set is being replaced, under the lock of its writers, with the same
// restrictions (see [Observer]). The middleware checks for it with a type
// assertion; an Observer without it is told nothing.
//
// [prommetrics]: https://pkg.go.dev/github.com/ratekeeper/ratekeeper/middleware/prommetrics
type PolicyObserver interface {
	Observer
	ObservePolicy(policy string, spec algorithms.Spec)
}

// A GiveBackObserver is an [Observer] that is also told, after the handler
// has returned, of the policies under which an admitted request's units
// went back to the store because its response does not count
// (policy.CountIf): once per such policy and request, with the policy's
// name. [prommetrics] counts them. Of nested middlewares that share a
// policy, the one further in whose copy of it a middleware further out
// counted the request under ([Event.CountedFurtherOut]: a copy lowered
// there by [Middleware.SetLimit] or a reload) gives back the units its
// copy took but does not tell it: the middleware further out gives back
// and tells its own, so that a request is given back once under the
// policy, as it is counted allowed once. The middleware checks for it
// with a type assertion; an Observer without it is told nothing ([Stats]
// counts the requests, GivenBack, either way, and each middleware counts
// those it gave back units of, such a copy's too).
//
// [prommetrics]: https://pkg.go.dev/github.com/ratekeeper/ratekeeper/middleware/prommetrics
type GiveBackObserver interface {
	Observer
	ObserveGiveBack(policy string)
}

// A CloseObserver is an [Observer] that is also told when a middleware it
// observes is closed ([Middleware.Close]), with the failure [State] the
// middleware was in then, so that it can count the middleware out of what
// it keeps per State: [prommetrics] and otelmetrics take it out of
// failure_state as if it had returned to StateHealthy, so that a discarded
// middleware whose store was failing does not hold the gauge at that State
// for ever. It is called once per middleware, after every ObserveState of
// that middleware and under the same lock (the middleware reports no
// change of State after it, nor of its limits: ObserveLimit,
// ObservePolicy and ObservePolicyRemoved are not called once it is closed, so that its
// limits leave the per-policy gauges to the middleware that replaces it),
// so it must not call back into the middleware's Close. The middleware checks for it with a type assertion;
// an Observer without it is told nothing.
//
// [prommetrics]: https://pkg.go.dev/github.com/ratekeeper/ratekeeper/middleware/prommetrics
type CloseObserver interface {
	Observer
	ObserveClose(last State)
}

// A SharedObserver is an [Observer] made to be shared by any number of
// middlewares (those of an application, or a middleware and the one
// rebuilt to replace it) that keeps what each reports apart: the metrics
// of [prommetrics] and otelmetrics, whose limit gauges are per policy
// name. Passed to [WithObserver], it is not what the middleware calls:
// each time the option is applied (once per middleware built, even when
// one Option value is given to several [New] calls) WithObserver asks it
// for the observer of that middleware alone, with ForMiddleware, and the
// middleware reports to that one. So the Close of one middleware, or a
// reload of it dropping a policy, takes out of the shared observer what
// that middleware reported and nothing another one does.
//
// WithObserver asks only the observers it is given: a SharedObserver
// inside an Observer of the application's (one that calls several, say)
// is called as is, and cannot tell the middlewares apart; give the
// wrapper a ForMiddleware that wraps the shared one's.
//
// [prommetrics]: https://pkg.go.dev/github.com/ratekeeper/ratekeeper/middleware/prommetrics
type SharedObserver interface {
	Observer
	// ForMiddleware returns a new observer of one middleware, not nil.
	// WithObserver installs it as is (it does not ask it for a
	// ForMiddleware in turn), so it need not, and should not, implement
	// SharedObserver itself; it should implement [BoundObserver].
	ForMiddleware() Observer
}

// A BoundObserver is an [Observer] of one middleware that the
// ForMiddleware of a [SharedObserver] returned, and that tells which: the
// Bindings of [prommetrics] and otelmetrics are. An application that
// calls ForMiddleware itself and gives the result to a middleware beside
// the SharedObserver, or beside another observer bound to it, has two
// observers recording each request of that middleware into one:
// [WithObserver] refuses it. The middleware checks for it with a type
// assertion; an observer without it cannot be told from any other.
//
// [prommetrics]: https://pkg.go.dev/github.com/ratekeeper/ratekeeper/middleware/prommetrics
type BoundObserver interface {
	Observer
	// BoundTo returns the SharedObserver whose ForMiddleware returned it.
	BoundTo() SharedObserver
}

// An Event is the outcome of one evaluated request. It is passed by value;
// Result and Request must not be kept after the call.
type Event struct {
	// Request is the request evaluated.
	Request *http.Request
	// Result holds the policies evaluated and, once taken, their decisions
	// (Result.Taken); Result.Err is the failure met, if any.
	Result *Result
	// Outcome says what the middleware did.
	Outcome Outcome
	// Latency is the time the decision took: key extraction and the store
	// call, from the middleware's clock. It excludes the handler and any
	// leaky_queue hold (see [Event.Held]).
	Latency time.Duration
	// pattern is the middleware's pattern function (WithPatternFunc);
	// nil for the default.
	pattern func(*http.Request) string
	// held is the time the middleware held the request for a leaky_queue
	// Delay, never negative; wasHeld says it held it (see Held).
	held    time.Duration
	wasHeld bool
	// early says the request was refused at once (Abandoned), not held,
	// because its context's deadline comes at or before the end of its Delay;
	// left is the time its deadline left it then, never negative.
	early bool
	left  time.Duration
	// countedOut are the policies of Result (a mask over its Set) that a
	// middleware further out counted the request under (see
	// CountedFurtherOut).
	countedOut uint64
}

// Held returns how long the middleware held the request for its turn in a
// leaky_queue ([policy.Result.Delay]) before the Event, on the
// middleware's clock ([WithClock]), and whether it held it at all.
//
// For a request held (ok true) the Outcome is Allowed, the hold having
// run its course, or Abandoned, the hold cut short: its client went
// away, or its context's deadline ran out during the hold; d is then the
// time held until that moment, shorter than the Delay. d is never
// negative: a clock set back during the hold, or one that did not move
// (a [WithWait] that returns at once), reports 0 with ok true.
//
// A request not held reports (0, false): every request no leaky_queue
// delayed; one admitted with a Delay in shadow mode ([WithShadow]), which
// holds nothing; one refused at once because its context's deadline comes at or
// before its turn (Abandoned, not held). Of nested middlewares each
// reports its own hold alone: one further in that holds a request again
// reports that second hold, not the sum.
func (e Event) Held() (d time.Duration, ok bool) {
	return e.held, e.wasHeld
}

// Route returns the route pattern of the request as the middleware finds
// it for its policies: its [WithPatternFunc] function, else
// [policy.RoutePattern] (the pattern a ServeMux or chi set once routed);
// "" when it is not known (a 404, or a middleware that runs before
// routing without a pattern function that can tell). Unlike the path, it
// holds no value of the request's own (a token, an e-mail address): logs
// can keep it. Each call asks the pattern function again (a lookup in the
// router for ServeMuxPattern and ChiPattern); ask only when needed.
func (e Event) Route() string {
	if e.Request == nil {
		return ""
	}
	if e.pattern != nil {
		return e.pattern(e.Request)
	}
	return policy.RoutePattern(e.Request)
}

// DeniedBy reports whether policy i of e.Result denied the request (it was
// taken and its decision is not Allowed).
func (e Event) DeniedBy(i int) bool {
	return e.Result.Taken() && !e.Result.Decision(i).Allowed
}

// CountedFurtherOut reports whether a middleware further out (one this
// middleware is nested in) admitted the request and counted it under the
// i-th policy of e.Result as a request of that policy: the middleware
// further out runs the policy this one holds a copy of, lowered here by
// [Middleware.SetLimit] or a reload (or raised there), and this one
// judges the state it counted (see [ErrCountedTwice]). A policy given to
// both as it is, or counting in the same state, is left out of this
// one's Result instead. The middleware further out reported the request
// [Allowed] under the policy's name already, if it has an observer: an
// observer counting requests per policy counts such a request allowed
// there alone, as middleware/prommetrics and middleware/otelmetrics do,
// so that one request is one request of the policy whether or not its
// limit is lowered here. A refusal here is news (the middleware further
// out admitted the request): they count it Denied (or ShadowDenied)
// under the policy as any other. A request [Abandoned] here is not news
// of the policy (its client went away, or its deadline ran out): they
// count it nothing more under the policy, as when the policy, not
// lowered here, is left out of this one's Result. Nor is a give-back
// here: it is not told to a [GiveBackObserver], the middleware further
// out telling its own.
//
// It reports false for a leaky_queue copy, which holds the request in a
// queue of its own here, taking a place of its own (its hold is this
// middleware's); for a policy that counts apart from one of its name
// further out ([ErrSameNameNested]); for a request that no middleware
// further out admitted, or that only one built [WithoutContext] decided
// (those further in do not see it); and for an i out of range.
func (e Event) CountedFurtherOut(i int) bool {
	if e.countedOut == 0 || e.Result == nil || i < 0 {
		return false
	}
	m := e.Result.Mask()
	for ; i > 0 && m != 0; i-- {
		m &= m - 1
	}
	return m&-m&e.countedOut != 0
}

// An Outcome is what the middleware did with a request it evaluated.
type Outcome uint8

const (
	// Allowed: every policy admitted the request; it was passed on (after
	// a leaky_queue Delay, if any), possibly decided by the fallback store.
	Allowed Outcome = iota
	// Denied: a policy denied the request (or its cost was out of range);
	// it was answered 429.
	Denied
	// ShadowDenied: shadow mode let through a request it would have
	// rejected.
	ShadowDenied
	// KeyRejected: a policy found no key; the request was answered 400 or
	// 403.
	KeyRejected
	// FailedOpen: the store failed and the request was let through
	// unlimited.
	FailedOpen
	// FailedClosed: the store failed and the request was answered 503.
	FailedClosed
	// Abandoned: the request was not served: its context ended (the
	// client went away, or a server-side deadline ran out) before the
	// decision or while held for a leaky_queue Delay (answered 503, with
	// Retry-After for a deadline), or a leaky_queue policy admitted it with a
	// Delay that ends after its context's deadline (answered 503 with
	// Retry-After at once). A leaky_queue place it held is given back. It
	// is reported as this outcome only, never also as Allowed. Shadow mode
	// serves such a request, as ShadowDenied.
	Abandoned
)

var outcomeNames = [...]string{"allowed", "denied", "shadow_denied", "key_rejected", "failed_open", "failed_closed", "abandoned"}

// String returns the outcome's name in snake case ("shadow_denied"), as
// metrics label it.
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "Outcome(" + strconv.Itoa(int(o)) + ")"
}

// A State says how the middleware is deciding: with its store, or under
// its failure mode because the store's backend failed on its last call
// (see [OnStoreError]; what counts as a failure of the backend is as for
// [WithBreaker]). A successful store call, or an answer of the backend
// about one key ([algorithms.ErrKeyState]) or refusing the call for now
// ([algorithms.ErrTryAgain]), returns it to StateHealthy. A
// call that says nothing of the backend leaves it as it was: one its
// request's context ended without counting as a failure, an invalid check,
// a refusal of the store's own circuit breaker ([algorithms.ErrCircuitOpen]),
// or a store its owner closed ([algorithms.ErrClosed]; its requests still
// get the failure mode and count in Stats.StoreErrors, and without an
// observer the first is logged on slog.Default, at Error).
type State uint8

const (
	// StateHealthy: the store answers.
	StateHealthy State = iota
	// StateFailingOpen: the store fails; requests pass unlimited.
	StateFailingOpen
	// StateFailingClosed: the store fails; requests are answered 503
	// (served in shadow mode, [WithShadow], which never rejects).
	StateFailingClosed
	// StateFallback: the store fails; the fallback store decides.
	StateFallback
)

var stateNames = [...]string{"healthy", "open", "closed", "fallback"}

// States lists every State, in order.
var States = [...]State{StateHealthy, StateFailingOpen, StateFailingClosed, StateFallback}

// String returns the state's name: "healthy", "open", "closed" or
// "fallback" (the failure mode in force).
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// state returns the State a store failure puts the middleware in.
func (f Failure) state() State {
	switch f.mode {
	case failClosed:
		return StateFailingClosed
	case fallBack:
		return StateFallback
	}
	return StateFailingOpen
}

// WithObserver sets the observers of the middleware, called in order (see
// [Observer]). Several WithObserver options add up. An observer that is a
// [SharedObserver] is replaced by its ForMiddleware each time the option
// is applied: pass one metrics Observer to every middleware (or one
// Option to every New) and each middleware is kept apart.
//
// One observer given twice to one middleware (in one option or two, as a
// base option list and an application's own may both add it) is an
// error, whatever its type: it would record each of that middleware's
// requests twice (a LogObserver would log each record twice, a metrics
// Observer count each request twice). So is a [BoundObserver] (a
// ForMiddleware the application called itself) given beside the
// SharedObserver it is bound to, or beside another bound to that one.
// Observers are one when they are equal values of one comparable type
// (the same pointer, most often): two LogObservers are two, even on one
// logger; observers of a type that is not comparable (a func, a slice)
// are never taken for one. A LogObserver writing to the logger given to
// [WithLogger] is an error too: see WithLogger. So is a nil observer,
// and a SharedObserver whose ForMiddleware returns nil. The problems of
// all the observers are reported, one per line (an observer's first,
// when it has several), each naming the observer by its index when the
// option was given several.
func WithObserver(obs ...Observer) Option {
	return func(m *Middleware) error {
		// Every problem, one per line: each observer's first, named by
		// its index when several are given.
		var errs []error
		given := m.given
		all := make([]Observer, 0, len(obs))
		for i, o := range obs {
			at := "" // where the problem is, when several observers are given
			if len(obs) > 1 {
				at = fmt.Sprintf("observer at index %d: ", i)
			}
			if nilness.Is(o) {
				if len(obs) > 1 {
					errs = append(errs, fmt.Errorf("middleware: WithObserver: observers hold a nil Observer at index %d", i))
				} else {
					errs = append(errs, errors.New("middleware: WithObserver: observer is nil"))
				}
				continue
			}
			g := givenAs(o)
			if err := g.check(m.loggers, given, at); err != nil {
				errs = append(errs, err)
				continue
			}
			given = append(given, g)
			if so, ok := o.(SharedObserver); ok {
				if o = so.ForMiddleware(); nilness.Is(o) {
					errs = append(errs, fmt.Errorf("middleware: WithObserver: %sForMiddleware of the %T returned nil", at, so))
					continue
				}
			}
			all = append(all, o)
		}
		if len(errs) > 0 {
			return errlist.Join(errs)
		}
		m.given = given
		if m.obs != nil {
			all = append([]Observer{m.obs}, all...)
		}
		switch len(all) {
		case 0:
		case 1:
			m.obs = all[0]
		default:
			m.obs = observers(all)
		}
		return nil
	}
}

// givenAs returns o as given to WithObserver, with the SharedObserver it
// records into.
func givenAs(o Observer) givenObserver {
	g := givenObserver{o: o}
	switch x := o.(type) {
	case SharedObserver:
		g.shared = x
	case BoundObserver:
		if s := x.BoundTo(); !nilness.Is(s) {
			g.shared = s
		}
	}
	return g
}

// check returns the error of g given to a middleware that was given the
// loggers (WithLogger) and the observers given before, its text with at
// (the index of g, when one WithObserver was given several) after the
// option's name; nil if g records apart from them all.
func (g givenObserver) check(loggers []*LogObserver, given []givenObserver, at string) error {
	if lo, ok := g.o.(*LogObserver); ok {
		for _, wl := range loggers {
			if wl != lo && wl.log == lo.log {
				return errLoggerBeside(lo, at)
			}
		}
	}
	for _, p := range given {
		if msg := g.conflict(p); msg != "" {
			return errors.New("middleware: WithObserver: " + at + msg)
		}
	}
	return nil
}

// A givenObserver is an observer as given to WithObserver, with the
// SharedObserver it records into: itself, if it is one; the one it is
// bound to, if it is a BoundObserver; else nil.
type givenObserver struct {
	o      Observer
	shared SharedObserver
}

// conflict returns the text of the error of g given to a middleware p
// was given to before (after the option's name), "" if the two record
// apart.
func (g givenObserver) conflict(p givenObserver) string {
	if sameObserver(g.o, p.o) {
		return fmt.Sprintf("the %T is given twice: it would record each request twice; give it once", g.o)
	}
	if g.shared == nil || p.shared == nil || !sameObserver(g.shared, p.shared) {
		return ""
	}
	_, gShared := g.o.(SharedObserver)
	_, pShared := p.o.(SharedObserver)
	switch {
	case pShared:
		return fmt.Sprintf("the %T is an observer of the %T given too (its ForMiddleware): both would record each request; give the %[2]T alone, which WithObserver binds to each middleware", g.o, p.o)
	case gShared:
		return fmt.Sprintf("the %T is an observer of the %T given too (its ForMiddleware): both would record each request; give the %[2]T alone, which WithObserver binds to each middleware", p.o, g.o)
	}
	return fmt.Sprintf("two %T of one %T are given (its ForMiddleware): both would record each request; give one, or the %[2]T alone", g.o, g.shared)
}

// sameObserver reports whether a and b are the same observer: equal
// values of one comparable type (an observer that is not, such as a
// func or a slice of observers, is never the same as another).
func sameObserver(a, b Observer) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.Type() == vb.Type() && va.Comparable() && vb.Comparable() && va.Equal(vb)
}

// observers calls several observers in order.
type observers []Observer

func (os observers) ObserveRequest(e Event) {
	for _, o := range os {
		o.ObserveRequest(e)
	}
}

func (os observers) ObserveState(from, to State) {
	for _, o := range os {
		o.ObserveState(from, to)
	}
}

func (os observers) ObserveLimit(policy string, limit, configured int64) {
	for _, o := range os {
		o.ObserveLimit(policy, limit, configured)
	}
}

// ObserveGiveBack tells the observers that implement [GiveBackObserver].
func (os observers) ObserveGiveBack(policy string) {
	for _, o := range os {
		if gb, ok := o.(GiveBackObserver); ok {
			gb.ObserveGiveBack(policy)
		}
	}
}

// ObserveClose tells the observers that implement [CloseObserver].
func (os observers) ObserveClose(last State) {
	for _, o := range os {
		if co, ok := o.(CloseObserver); ok {
			co.ObserveClose(last)
		}
	}
}

// ObservePolicy tells the observers that implement [PolicyObserver].
func (os observers) ObservePolicy(policy string, spec algorithms.Spec) {
	for _, o := range os {
		if po, ok := o.(PolicyObserver); ok {
			po.ObservePolicy(policy, spec)
		}
	}
}

// ObservePolicyRemoved tells the observers that implement [RemovalObserver].
func (os observers) ObservePolicyRemoved(policy string) {
	for _, o := range os {
		if ro, ok := o.(RemovalObserver); ok {
			ro.ObservePolicyRemoved(policy)
		}
	}
}
