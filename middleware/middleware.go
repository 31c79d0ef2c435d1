package middleware

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/bits"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/deadline"
	"github.com/ratekeeper/ratekeeper/internal/errlist"
	"github.com/ratekeeper/ratekeeper/internal/nilness"
	"github.com/ratekeeper/ratekeeper/internal/reqcopy"
	"github.com/ratekeeper/ratekeeper/internal/resultroom"
	"github.com/ratekeeper/ratekeeper/internal/timing"
	"github.com/ratekeeper/ratekeeper/policy"
)

// A Middleware rate-limits the requests of the handlers it wraps. For each
// request it finds the policies that apply, decides all of them with one
// store call (all or nothing), sets the rate-limit headers, and either
// passes the request on — after holding it for a leaky_queue Delay — or
// answers 429 Too Many Requests with Retry-After and a problem+json body.
// The decision is reachable downstream through [FromContext].
//
// Build one with [New]; its Handler method fits chi's r.Use and r.With and
// wraps any http.Handler. A Middleware is safe for concurrent use.
type Middleware struct {
	store   algorithms.Store
	set     atomic.Pointer[policy.Set] // the active rule set; each request loads it once
	fb      atomic.Pointer[feedback]   // nil: no Feedback (see SetFeedback)
	pattern func(*http.Request) string
	obs     Observer        // nil: nothing observed
	given   []givenObserver // those given to WithObserver (see conflict)

	profile     Profile
	pkSecret    []byte
	clock       algorithms.Clock
	wait        func(context.Context, time.Duration) error
	failure     Failure
	breakAfter  int64
	cooldown    time.Duration
	onError     func(*http.Request, error)
	onDeny      func(http.ResponseWriter, *http.Request, *Result)
	onReject    func(http.ResponseWriter, *http.Request, Rejection)
	skip        func(*http.Request) bool
	shadow      bool
	onShadow    func(*http.Request, *Result)
	problemType string
	noContext   bool
	built       *fileSettings  // the configuration's settings, when built by FromConfig
	loggers     []*LogObserver // those WithLogger built, in order
	fwdExplicit bool           // CheckForwarding or CheckForwardingFrom decided fwdWanted (a configuration does not)
	fwdWanted   bool           // the options ask for the forwarding check
	warnLog     *LogObserver   // where the setup warnings are logged besides the error handler (see warn)
	// fwdFromExplicit: CheckForwardingFrom named the proxies in
	// fwdProxies (a configuration does not replace them).
	fwdFromExplicit bool

	fwd        atomic.Uint32             // the forwarding check's state (see CheckForwarding)
	fwdProxies atomic.Pointer[proxies]   // the proxies the forwarding check compares peers with; nil: none known
	fwdRead    atomic.Pointer[readPeers] // what the forwarding check remembers of the rule set's keys: the peers whose headers they read, each policy's budget (see readPeers)

	failures  atomic.Int64   // consecutive store failures
	deadlines deadline.Calls // the store calls that may reach a deadline that counts, and the backend's answers
	openUntil atomic.Int64   // breaker open until this Unix nanosecond
	state     atomic.Uint32  // the State the store's last answer put the middleware in
	// stateMu orders the changes of failures and state that go together,
	// and their reports to the observer (see recovered and failed).
	stateMu sync.Mutex
	// Without an observer, the changes of state are logged on
	// slog.Default, at most one record a second (see logState):
	// the instant of the last record (Unix ns, 0 before any), the
	// changes left out since, the State the last record went to and the
	// one the last change went to. Guarded by stateMu.
	stateLogged   int64
	stateUnlogged int64
	stateLoggedTo State
	stateTold     State
	// statePending: a change was left out, and the State the changes
	// went to is not the one last logged (see flushStateLog);
	// stateLoggedAt is stateLogged, read without stateMu.
	statePending  atomic.Bool
	stateLoggedAt atomic.Int64
	// closed: Close was called; the observers are told no more changes
	// of state. Guarded by stateMu.
	closed bool
	stats  stats
	// closedStoreLogged: logStoreClosed has logged.
	closedStoreLogged atomic.Bool

	rules rules // the writers' side of set (see SetPolicies)
	// carryUntil is, while a policy of set is guarded by a Spec a
	// reload replaced (see SetPolicies), the earliest instant (Unix ns,
	// on m.clock) at which such a guard ends; 0 when none is.
	carryUntil atomic.Int64
	// sets are the rule sets m built that are still alive (see
	// startedSet); allocated apart from m, which its cleanups must not
	// reach.
	sets *builtSets
	// followHook, set by tests only, is called by ApplyConfig between
	// the policies and the forwarding setup it applies (see follow).
	followHook func()
}

// New returns a middleware that enforces policies, keeping their state in
// store (for example [algorithms.NewMemoryStore]). The policies are checked
// together as a [policy.Set]: names must be unique. Policies restricted by
// methods or routes make a rule table; see [policy.WithRoutes] for where the
// route pattern comes from.
//
// Every misconfiguration is an error naming the option or the policy, and
// every one is reported, one per line, in a fixed order: a nil store,
// each refused option in the order given (a nil one by its index:
// "middleware: Options hold a nil Option at index 2"), then the
// policies', which are judged even when an option is refused: every
// problem [policy.NewSet] finds, the first behind this package's prefix
// and the others following it as package policy writes them, and a
// [policy.CountIf] policy over a store, or a fallback store, that cannot
// give units back. One problem is its error alone; several are joined
// with [errors.Join], so that errors.Is and errors.As see each of them
// (errors.As gives the first *policy.Error) and [policy.Errors] lists
// the policies' *policy.Error values.
func New(store algorithms.Store, policies []*policy.Policy, opts ...Option) (*Middleware, error) {
	return newMiddleware(store, policies, nil, opts, nil)
}

// newMiddleware is New with the options pre (a configuration's: see
// FromConfig) applied before opts; a nil option is named by its index in
// opts, as the caller wrote them. cfgErr is the error of the
// configuration's settings that pre leaves out (see FromConfig), or nil.
//
// Every problem is reported, in this order: a nil store, cfgErr's, each
// option's, and the policies' (see build). The policies are judged even
// when an option is refused, since none bears on them: a pattern function
// refused is not given to the set, and a store refused (nil, a nil
// fallback) is not asked whether it gives units back.
func newMiddleware(store algorithms.Store, policies []*policy.Policy, pre, opts []Option, cfgErr error) (*Middleware, error) {
	var errs []error
	if nilness.Is(store) {
		errs = append(errs, errors.New("middleware: store is nil"))
		store = nil
	}
	if j, ok := cfgErr.(interface{ Unwrap() []error }); ok {
		errs = append(errs, j.Unwrap()...)
	} else if cfgErr != nil {
		errs = append(errs, cfgErr)
	}
	m := &Middleware{
		store:       store,
		clock:       algorithms.SystemClock,
		wait:        sleep,
		breakAfter:  5,
		cooldown:    5 * time.Second,
		problemType: ProblemTypeQuotaExceeded,
		sets:        new(builtSets),
		fwdWanted:   true, // see CheckForwarding; a configuration decides for itself (wantConfig)
	}
	for _, opt := range pre {
		if err := opt(m); err != nil {
			errs = append(errs, err)
		}
	}
	for i, opt := range opts {
		if opt == nil {
			errs = append(errs, fmt.Errorf("middleware: Options hold a nil Option at index %d", i))
		} else if err := opt(m); err != nil {
			errs = append(errs, err) // as it is: an Option of the caller's own may join errors of its own types
		}
	}
	if len(errs) > 0 {
		// Judged, not applied: no observer hears of a middleware that
		// is not built.
		m.rules.mu.Lock()
		_, _, perrs := m.build(policies, nil)
		m.rules.mu.Unlock()
		errs = append(errs, wrapEach("middleware: ", perrs)...)
		return nil, errlist.Join(errs)
	}
	if n := len(m.loggers); n > 0 {
		m.warnLog = m.loggers[n-1]
	} else {
		m.warnLog = findLogObserver(m.obs)
	}
	if m.fwdWanted {
		m.fwd.Store(fwdChecking)
	}
	for _, l := range m.loggers {
		if l.drawn && m.pkSecret != nil {
			// Its pks are the headers' (see WithLogger).
			l.pkSecret, l.drawn = m.pkSecret, false
		}
		// Its seconds are the middleware's (see WithLogger).
		l.clock = m.clock
	}
	m.rules.mu.Lock()
	perrs := m.setPolicies(policies)
	m.rules.mu.Unlock()
	if len(perrs) > 0 {
		return nil, errlist.Join(wrapEach("middleware: ", perrs))
	}
	return m, nil
}

// wrapEach returns errs, each behind prefix (the package's, and the call
// that failed): each an independent problem, whose own lines (several of
// a policy.NewSet, say) follow it as they are.
func wrapEach(prefix string, errs []error) []error {
	out := make([]error, len(errs))
	for i, err := range errs {
		out[i] = fmt.Errorf("%s%w", prefix, err)
	}
	return out
}

// MustNew is like [New] but panics on a configuration error (the error
// New returns, every problem), for one-line setups:
// r.Use(middleware.MustNew(store, policies).Handler).
func MustNew(store algorithms.Store, policies []*policy.Policy, opts ...Option) *Middleware {
	m, err := New(store, policies, opts...)
	if err != nil {
		panic(err)
	}
	return m
}

// Set returns the policies the middleware enforces now, with their
// effective limits (see [Middleware.SetLimit]).
func (m *Middleware) Set() *policy.Set { return m.set.Load() }

// Handler returns next wrapped by the middleware. It panics if next is nil
// (or a nil function or pointer), as [http.Handle] does, rather than at
// the first request that passes.
//
// Next is handed a copy of the request, carrying the decision in its
// context when a policy applies (see [FromContext]; [WithoutContext]
// passes the request itself). Once next returns, even by a panic, what it
// set on that copy is given to the request the middleware was handed, as
// if next had served it: the forms it parsed (r.Form, r.PostForm,
// r.MultipartForm), where that request has none, so that net/http removes
// a multipart form's temporary files after the handler as it does for its
// own request, and the pattern and path values a router in next matched
// (r.Pattern, r.PathValue), which a metrics or logging middleware further
// out reads after its handler. The trailer of a chunked body is in the
// copy's r.Trailer once next has read the body, as in the request's.
// The forms a deny or reject handler
// ([WithDenyHandler], [WithRejectHandler]) or the shadow report
// ([WithShadow]) parsed on the copy it is handed are given back likewise
// once it returns, even by a panic; so are those a key function parsed.
func (m *Middleware) Handler(next http.Handler) http.Handler {
	if nilness.Is(next) {
		panic("middleware: Handler: next is nil")
	}
	fed := &fedHandler{m: m, next: next}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.serve(w, r, fed)
	})
}

func (m *Middleware) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if m.skip != nil && m.skip(r) {
		next.ServeHTTP(w, r)
		return
	}
	var start time.Time
	if m.obs != nil {
		start = m.clock.Now()
	}
	if cu := m.carryUntil.Load(); cu != 0 && m.clock.Now().UnixNano() >= cu {
		m.endCarries()
	}
	set := m.set.Load() // one immutable snapshot for the whole request
	caller := r         // what next sets on the request passed on is given to it (see pass)
	mask, unrouted := set.MatchRoute(r)
	if !m.noContext && (mask != 0 || unrouted) {
		// next is handed a copy (one marked unrouted, or under the
		// decision's context): it sees the trailers of a chunked body
		// as next would see them on r. A request passed on as it came
		// is left as it is.
		reqcopy.Trailer(r)
	}
	if unrouted {
		var routedLater bool
		if r, routedLater = m.noteUnrouted(r, set); routedLater {
			// Once next has served r: did the router route it after
			// all? (See unroutedServed.)
			defer m.unroutedServed(r, caller.Pattern, set)
		}
	}
	if mask == 0 {
		pass(w, caller, r, next)
		return
	}
	if m.fwd.Load() == fwdChecking {
		m.checkForwarding(r, set, mask)
	}
	if m.noContext {
		res := resultPool.Get().(*Result)
		res.shadow, res.fallback, res.err, res.wrote, res.marks, res.outerWait = false, false, nil, 0, 0, 0
		var (
			vals *[2]string
			buf  []byte
		)
		if m.profile != NoHeaders {
			// The header values outlive the request's Result.
			if m.narrow(mask) {
				hv := new(headerValues)
				vals, buf = &hv.vals, hv.buf[:0]
			} else {
				hv := new(wideHeaderValues)
				vals, buf = &hv.vals, hv.long[:0]
			}
		}
		m.decide(w, r, next, set, mask, start, nil, res, vals, buf)
		// Not deferred: a deferred call in decide's many returns costs
		// every request more than a Result the pool loses to a panic.
		resultPool.Put(res)
		return
	}
	rc, buf := m.newResultContext(r, mask)
	if r != caller {
		// Marked as unrouted: decide gives r what next set on the
		// request it passed on, and r gives it to the caller's.
		defer reqcopy.Back(caller, r)
	}
	m.decide(w, r, next, set, mask, start, rc, &rc.res, &rc.vals, buf)
}

// rematch matches r again under set, the rules it started with further
// out (see decide), and returns its policies that apply, r as it goes on
// (marked, under rc's context too, when counted as unrouted here: see
// noteUnrouted) and the handler to pass it on to: next, or, when r was
// counted here and the router is to be asked once it has served r whether
// it routed r after all (see unroutedServed), next followed by that
// question, as serve asks it for a request it counted. When no policy
// applies it passes r on to next and reports it served.
func (m *Middleware) rematch(w http.ResponseWriter, r *http.Request, next http.Handler, set *policy.Set, rc *resultContext) (uint64, *http.Request, http.Handler, bool) {
	caller := r // see pass
	mask, unrouted := set.MatchRoute(r)
	routedLater := false
	if unrouted {
		r, routedLater = m.noteUnrouted(r, set)
		if rc != nil {
			rc.Context = r.Context()
		}
	}
	if mask == 0 {
		if routedLater {
			// Asked even when next panics, for a caller that recovers,
			// as serve and routedAfter ask it.
			defer m.unroutedServed(r, caller.Pattern, set)
		}
		pass(w, caller, r, next)
		return 0, r, next, true
	}
	if routedLater {
		// One allocation, for such a request only (a rule change between
		// the layers of a middleware nested in itself, and a route the
		// pattern function did not know).
		next = &routedAfter{m: m, next: next, before: caller.Pattern, set: set}
	}
	return mask, r, next, false
}

// routedAfter is the handler a request goes on to once rematch counted it
// as unrouted with policies to decide still: next, after which it asks
// whether the router routed the request after all (see unroutedServed).
type routedAfter struct {
	m      *Middleware
	next   http.Handler
	before string      // the pattern the request came with
	set    *policy.Set // the rules it was matched under
}

// ServeHTTP serves r with next, then asks whether the router routed it,
// even when next panics, as serve does.
func (h *routedAfter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer h.m.unroutedServed(r, h.before, h.set)
	h.next.ServeHTTP(w, r)
}

// decide serves r once the policies of mask in set apply to it: it
// prepares and takes res, writes the headers, then rejects, holds or
// passes r on to next. rc is the request's context (nil without context,
// see WithoutContext); vals and buf hold the header values.
func (m *Middleware) decide(w http.ResponseWriter, r *http.Request, next http.Handler, set *policy.Set, mask uint64, start time.Time, rc *resultContext, res *Result, vals *[2]string, buf []byte) {
	caller := r // what next sets on the request passed on is given to it (see pass)
	res.shadow = m.shadow
	// The innermost middleware further out that wrote headers (past those
	// between that wrote none: no policy had a key, the store failed):
	// ours are written in its profile, so that the response carries one
	// (see WithHeaders). The list profile adds field lines; in the others
	// our values replace its values only when they report a lower
	// remaining (see setHeadersAt).
	profile, most := m.profile.split()
	var outer *policy.Result
	nested := r.Context().Value(outerKey{}) != nil
	if nested {
		// Nested in itself, and its rules replaced since a layer further
		// out decided r: r is decided under the set it started with.
		if s := m.startedSet(r, set); s != nil {
			set = s
			var served bool
			if mask, r, next, served = m.rematch(w, r, next, set, rc); served {
				return
			}
		}
	}
	if nested && profile != NoHeaders {
		if o, ok := r.Context().Value(wroteKey{}).(*Result); ok {
			profile, outer = Profile(o.wrote-1), &o.pr
			most = o.marks&markMost != 0
		}
	}
	if most {
		res.marks |= markMost // see headerProfile
	}

	// The policies left out below because a shadow middleware further out
	// counted them: this one enforces them on the retry.
	own := adopted{set: set}
	// The policies decided here that a shadow middleware further out
	// denied, and so did not count: our members of them replace theirs.
	var redecided uint64
	// The policies decided here under their guards alone, their Spec
	// counted further out (see unrepeated).
	var ownOnly uint64
	// ownOnly and the policies decided here whose Spec a middleware
	// further out folded (see unrepeated): our members of them replace
	// its.
	var listed uint64
	// The policies decided here whose Spec a middleware further out
	// folded into its guard's (see unrepeated): its decision, if it
	// counted the request, is merged into ours (see mergeFolded).
	var foldedOut uint64
	// The guards counted further out at a limit other than they are
	// judged at here, as judged here (see unrepeated).
	var judged []outerGuard
	// The policies decided here with such a guard judged or checked
	// again: their members replace those further out they supersede
	// (see unrepeated and unlistOuter).
	var merged uint64
	// The policies left out here that a middleware further out counted
	// at a higher limit than the one in force here: its members or
	// values of them are restated at ours (see restateOuter).
	var restate []restated
	// The policies decided here that a middleware further out counted
	// the request under (see unrepeated), for the observer.
	var countedOut uint64
	err := set.Prepare(r, mask, &res.pr)
	if err == nil && nested {
		// Nested in other middlewares: the policies they decided already,
		// under the same keys, are left out (see ErrCountedTwice).
		var again uint64
		var unguard [policy.MaxGuards]uint64
		own.folds = foldMask(&res.pr)
		if again, own.mask, redecided, unguard, own.guards, ownOnly, foldedOut, merged, countedOut, judged, restate = m.unrepeated(r, set, &res.pr); again != 0 {
			if mask &^= again; mask == 0 {
				if d, ok := restateOuter(w.Header(), profile, nil, outer, m.clock.Now, 0, restate); ok {
					// Those further in compare their values with d.
					r = r.WithContext(&restatedContext{Context: r.Context(), over: outer, d: d})
				}
				pass(w, caller, m.adopting(r, rc, own), next)
				return
			}
			err = set.Prepare(r, mask, &res.pr)
		}
		listed = ownOnly | foldedOut
		if err == nil && (unguard != [policy.MaxGuards]uint64{} || ownOnly != 0) {
			// Counted under those guards further out already (the
			// k-th of each policy's in unguard[k]), and under the
			// Spec of those of ownOnly, decided here under their
			// other guards alone.
			for k, u := range unguard {
				nest.DropGuard(&res.pr, u, k)
			}
			nest.DropOwn(&res.pr, ownOnly)
		}
	}
	if err != nil {
		m.refusePrepared(w, caller, r, next, rc, res, err, start)
		return
	}

	// The instant before the Take, for a give-back (a policy with
	// CountIf applies): its waited, measured from here, is never shorter
	// than the store's reckoning.
	var taking time.Time
	if set.CountIfMask()&mask != 0 {
		taking = m.clock.Now()
	}
	if err := m.take(r, res); err != nil {
		if errors.Is(err, policy.ErrCost) {
			// A cost above the lowered limit of some policies, which a
			// store that cannot peek does not decide (see
			// policy.Result.Take): refused as out of range.
			m.refusePrepared(w, caller, r, next, rc, res, err, start)
			return
		}
		res.err = err
		if cerr := r.Context().Err(); cerr != nil {
			if m.shadowed(caller, r, rc, res) {
				// Shadow mode refuses nothing: the request it would have
				// answered 503 goes on, undecided, to a handler that
				// sees its context ended, as it would without the
				// middleware.
				m.observe(r, res, ShadowDenied, start, countedOut)
				pass(w, caller, rc.request(r), next)
				return
			}
			// The client went away (or the server is shutting down): it
			// reads no Retry-After. A server-side deadline (a timeout
			// middleware further out) that ran out first is answered as a
			// failure under FailClosed would be, and as a hold it cut
			// short is: when to come back, at least 1 s.
			m.stats.abandoned.Add(1)
			m.observe(r, res, Abandoned, start, countedOut)
			retry := int64(0)
			if errors.Is(cerr, context.DeadlineExceeded) {
				var failWait time.Duration
				if m.failure.mode == failClosed {
					failWait = m.failure.retryAfter
				}
				retry = max(1, seconds(failWait), seconds(outerWait(r, http.StatusServiceUnavailable, own)))
			}
			m.refusing(r, func() {
				refuse(caller, r, rc, func(c *http.Request) { m.unavailable(w, c, res, retry, err) })
			})
			return
		}
		if m.failure.mode == failClosed && !m.shadowed(caller, r, rc, res) {
			m.stats.failedClosed.Add(1)
			m.observe(r, res, FailedClosed, start, countedOut)
			retry := max(1, seconds(m.failure.retryAfter), seconds(outerWait(r, http.StatusServiceUnavailable, own)))
			m.refusing(r, func() {
				refuse(caller, r, rc, func(c *http.Request) { m.unavailable(w, c, res, retry, err) })
			})
			return
		}
		m.stats.failedOpen.Add(1)
		if m.failure.mode == failClosed {
			m.observe(r, res, ShadowDenied, start, countedOut)
		} else {
			m.observe(r, res, FailedOpen, start, countedOut)
		}
		pass(w, caller, rc.request(r), next)
		return
	}

	if ownOnly != 0 {
		mergeOuter(r.Context(), &res.pr, ownOnly)
	}
	if judged != nil {
		mergeJudged(&res.pr, judged)
	}
	if foldedOut != 0 {
		mergeFolded(r.Context(), &res.pr, foldedOut)
	}
	allowed := res.Allowed()
	var d time.Duration // the leaky_queue Delay the request is held for
	if allowed && !m.shadow {
		d = res.Delay()
	}
	var wait time.Duration    // a denial's wait for the middlewares further out
	var heldFor time.Duration // how long the request was held, once served
	if !allowed && !m.shadow {
		wait = outerWait(r, http.StatusTooManyRequests, own)
		res.outerWait = uint32(min(seconds(wait), math.MaxUint32))
	}
	if d == 0 {
		setHeadersWait(w.Header(), headerProfile(profile, res), &res.pr, outer, m.clock.Now, m.pkSecret, vals, buf, 0, wait)
		if holdsValues(profile, &res.pr, outer) {
			res.wrote = uint8(profile) + 1
			if nested {
				keepRestated(r.Context(), w.Header(), profile, res, outer, m.clock.Now)
			}
		}
		if redecided|listed|merged != 0 {
			unlistOuter(r.Context(), w.Header(), res, vals, redecided, listed, merged, 0, m.clock.Now)
		}
		if len(restate) != 0 {
			restateOuter(w.Header(), profile, res, outer, m.clock.Now, 0, restate)
		}
	}
	// A name of ours that a middleware further out wrote a member of too
	// (see oneMemberPerName): its members are made one as the response
	// goes out, once every middleware has written its own.
	shared := nested && d == 0 && sharesName(r.Context(), res, vals)
	if !allowed {
		if m.shadowed(caller, r, rc, res) {
			m.observe(r, res, ShadowDenied, start, countedOut)
			passShared(w, caller, rc.request(r), next, res, vals, shared)
			return
		}
		m.stats.denied.Add(1)
		m.observe(r, res, Denied, start, countedOut)
		if shared {
			oneMemberPerName(r.Context(), w.Header(), res, res, vals, 0)
		}
		m.refusing(r, func() {
			if m.onDeny != nil {
				refuse(caller, r, rc, func(c *http.Request) { m.onDeny(w, c, res) })
				return
			}
			m.deny(w, res, wait)
		})
		return
	}
	if d > 0 {
		// The headers of a held request leave with its response, after the
		// hold: they are set when it ends, their delta-seconds counted
		// from then (see setHeadersAt).
		held := m.clock.Now() // when the hold began
		if left, ok := untilDeadline(r.Context()); ok && left <= d {
			// The request's context ends before its turn, or at it (a
			// context is done at its deadline; a server-side timeout
			// shorter than the queue): holding it would only end in a
			// refusal when the deadline comes, or pass it on with its
			// context ending, its place kept from the requests behind
			// it until then. It is refused now
			// and its place goes back, as x/time/rate's Wait does. It
			// is neither held nor served: the observer is told it was
			// abandoned, and only that.
			m.stats.abandoned.Add(1)
			m.observeEarly(r, res, start, left, countedOut)
			early := fmt.Errorf("middleware: leaky_queue wait of %s ends after the request's deadline: %w", d, context.DeadlineExceeded)
			m.report(r, early)
			// Its headers report the queue as the store has it after the
			// refund (its place given back, unless a request queued
			// behind it), if the refund succeeded.
			m.refund(r, res, m.clock.Now().Sub(held))
			m.setHeldHeaders(r, w.Header(), profile, res, outer, vals, buf, 0, redecided, listed, merged, restate)
			if nested && sharesName(r.Context(), res, vals) {
				oneMemberPerName(r.Context(), w.Header(), res, res, vals, 0)
			}
			// Its retry waits for its turn, and for the middlewares
			// further out that admitted it with their last units.
			retry := max(1, seconds(d), seconds(outerWait(r, http.StatusServiceUnavailable, own)))
			m.refusing(r, func() {
				refuse(caller, r, rc, func(c *http.Request) { m.unavailable(w, c, res, retry, early) })
			})
			return
		}
		m.stats.delayed.Add(1)
		err := m.wait(r.Context(), d)
		waited := m.clock.Now().Sub(held)
		if err != nil {
			// The client went away (or the server is shutting down): its
			// place in the queue goes back to the store that gave it, and
			// its headers (for what wraps the middleware, the client
			// being gone) say so, as for a deadline refusal.
			m.stats.abandoned.Add(1)
			// Observed before the refund, which replaces the decisions
			// (and their Delays) with the store's after it.
			m.observeHeld(r, res, Abandoned, start, held, waited, countedOut)
			cut := fmt.Errorf("middleware: leaky_queue wait of %s cut short: %w", d, err)
			m.report(r, cut)
			m.refund(r, res, waited)
			m.setHeldHeaders(r, w.Header(), profile, res, outer, vals, buf, waited, redecided, listed, merged, restate)
			if nested && sharesName(r.Context(), res, vals) {
				oneMemberPerName(r.Context(), w.Header(), res, res, vals, waited)
			}
			retry := int64(0) // a client gone reads no Retry-After
			if errors.Is(err, context.DeadlineExceeded) {
				// A server-side deadline that ran out during the hold
				// (the wait ran late): as for one refused at once, the
				// time left to its turn, at least 1 s.
				retry = max(1, seconds(d-waited), seconds(outerWait(r, http.StatusServiceUnavailable, own)-waited))
			}
			m.refusing(r, func() {
				refuse(caller, r, rc, func(c *http.Request) { m.unavailable(w, c, res, retry, cut) })
			})
			return
		}
		m.setHeldHeaders(r, w.Header(), profile, res, outer, vals, buf, waited, redecided, listed, merged, restate)
		shared = nested && sharesName(r.Context(), res, vals)
		m.observeHeld(r, res, Allowed, start, held, waited, countedOut)
		heldFor = waited
		// The middlewares further in read the hold from its context.
		r = rc.heldRequest(r, waited)
	} else {
		m.observe(r, res, Allowed, start, countedOut)
		r = rc.request(r)
	}
	if own.mask|own.guards != 0 {
		r = m.adopting(r, rc, own)
	}
	if !taking.IsZero() {
		m.serveCounted(w, caller, r, next, res, taking, heldFor, vals, shared, countedOut)
		return
	}
	passShared(w, caller, r, next, res, vals, shared)
}

// refusePrepared answers r, whose Result res could not be prepared: err
// is the *policy.KeyError (400, 403) or *policy.CostError (429) of
// Prepare, or the CostError of a Take whose store could not decide a
// cost above a lowered limit (see policy.Result.Take). Shadow mode lets
// it through, giving caller (r, or the request r is a copy of) what next
// set on the request passed on (see pass).
func (m *Middleware) refusePrepared(w http.ResponseWriter, caller, r *http.Request, next http.Handler, rc *resultContext, res *Result, err error, start time.Time) {
	res.err = err
	m.report(r, err)
	if m.shadowed(caller, r, rc, res) {
		m.observe(r, res, ShadowDenied, start, 0)
		pass(w, caller, rc.request(r), next)
		return
	}
	var ke *policy.KeyError
	if errors.As(err, &ke) {
		m.stats.keyRejected.Add(1)
		m.observe(r, res, KeyRejected, start, 0)
		m.refusing(r, func() {
			refuse(caller, r, rc, func(c *http.Request) { m.rejectKey(w, c, res, ke) })
		})
		return
	}
	var ce *policy.CostError
	if errors.As(err, &ce) {
		m.stats.denied.Add(1)
		m.observe(r, res, Denied, start, 0)
		m.refusing(r, func() {
			if m.onDeny != nil {
				refuse(caller, r, rc, func(c *http.Request) { m.onDeny(w, c, res) })
				return
			}
			m.rejectCost(w, ce)
		})
		return
	}
	// Not reached: Prepare returns no other error.
	pass(w, caller, rc.request(r), next)
}

// serveCounted serves r, admitted as res, with next, gives caller what
// next set on r when r is a copy of it (see pass), and gives back the
// units of the policies of res whose count ([policy.CountIf]) says its
// response does not count, to the store that decided it; taking is when
// its Take began, vals the header values of res (see setHeadersAt). The
// give-back is made once the handler has returned, or as the status is
// written when a middleware further in refuses r (see refusing): then the
// status is final and the headers not yet sent, so the IETF line of res
// reports the give-back (see reviseLine), as it does after a handler that
// wrote nothing. held is how long r was held for a leaky_queue Delay
// before it was served. countedOut are the policies of res (a mask over
// its Set) that a middleware further out counted r under (see
// Event.CountedFurtherOut): their give-back here is not told to the
// observer (see giveBack).
//
// shared says that res shares a policy name with a middleware further out
// (see sharesName): its members are made one as the status is written,
// or once the handler returned having written nothing, after the
// give-back (see oneMemberPerName).
func (m *Middleware) serveCounted(w http.ResponseWriter, caller, r *http.Request, next http.Handler, res *Result, taking time.Time, held time.Duration, vals *[2]string, shared bool, countedOut uint64) {
	if r != caller {
		defer reqcopy.Back(caller, r)
	}
	res.marks |= markCounting // see refusing
	c := &counted{m: m, r: r, res: res, own: res, taking: taking, held: held, vals: vals, h: w.Header(), shared: shared, countedOut: countedOut}
	timing.ServeStatus(w, r, next, c.written, c.done)
}

// counted gives back the units of a request served by serveCounted.
//
// Once r is passed on, res and vals are shared with the middlewares
// further in, which read them (see unrepeated, outerWait, sharesName and
// oneMemberPerName), perhaps on a goroutine of their own that a handler
// between does not wait for (http.TimeoutHandler once its time is up): so
// counted writes neither. The give-back is made on a copy of res (own),
// and the header values edited as the response goes out are a copy of
// vals (ownVals), made when the status is written or the handler has
// returned: by then, on one goroutine, the middlewares further in have
// written theirs. The one thing they write in res is the mark of a
// refusal (see refusedFurtherIn).
type counted struct {
	m      *Middleware
	r      *http.Request
	res    *Result // shared: read only
	taking time.Time
	held   time.Duration // the hold before r was served (see serveCounted)
	vals   *[2]string    // shared: read only
	h      http.Header
	gave   bool // the give-back was made (or tried)
	shared bool // see serveCounted
	// countedOut are the policies of res (a mask over its Set) that a
	// middleware further out counted r under (see serveCounted).
	countedOut uint64
	// own is res as this middleware goes on with it: res itself, or,
	// once units came back, its copy holding the store's report of them.
	own *Result
	// ownVals is the copy of vals the response's lines are edited with,
	// once copied (valsCopied).
	ownVals    [2]string
	valsCopied bool
}

// values returns the header values to edit the response's lines with: a
// copy of vals, made at the first call.
func (c *counted) values() *[2]string {
	if c.vals == nil {
		return nil
	}
	if !c.valsCopied {
		c.ownVals, c.valsCopied = *c.vals, true
	}
	return &c.ownVals
}

// giveBack gives back, for status, the units of the policies of res that
// do not count it, on a copy of res (see counted), and returns them (see
// Middleware.giveBack).
func (c *counted) giveBack(status int) uint64 {
	give := giveMask(c.r, c.res, status)
	if give == 0 {
		return 0
	}
	own := &Result{shadow: c.res.shadow, fallback: c.res.fallback, wrote: c.res.wrote, marks: c.res.marks, err: c.res.err}
	resultroom.Copy(&own.pr, &c.res.pr)
	c.own = own
	return c.m.giveBack(c.r, own, give, c.taking, c.countedOut)
}

// written gives back as the status of a refusal further in is written,
// before the headers go out.
func (c *counted) written(status int) {
	if !c.gave && c.res.refusedFurtherIn() {
		c.gave = true
		given := c.giveBack(status)
		reviseLine(c.h, c.own, c.values(), given, c.held, c.m.pkSecret)
	}
	if c.shared {
		oneMemberPerName(c.r.Context(), c.h, c.res, c.own, c.values(), 0)
	}
}

// done gives back once the handler has returned, unless written did; sent
// says whether the headers went out.
func (c *counted) done(status int, sent bool) {
	if c.gave {
		return
	}
	c.gave = true
	if given := c.giveBack(status); !sent {
		reviseLine(c.h, c.own, c.values(), given, c.held, c.m.pkSecret)
		if c.shared {
			oneMemberPerName(c.r.Context(), c.h, c.res, c.own, c.values(), 0)
		}
	}
}

// giveMask returns the policies of res (a mask over its policies),
// admitted for r and answered with status, whose count says the response
// does not count.
func giveMask(r *http.Request, res *Result, status int) uint64 {
	var give uint64
	for i := range res.Len() {
		if !res.Policy(i).Counts(r, status) {
			give |= 1 << i
		}
	}
	return give
}

// giveBack gives back the units of the policies of give (a mask over the
// policies of res, admitted for r: see giveMask), and returns them when
// the give-back succeeded: res holds the store's report of their keys
// after it. A failure goes to the error hook. The observer is told of
// each policy whose units came back but those of countedOut (a mask over
// res's Set): a middleware further out counted r under them, and gives
// back there and tells of it, so that a request is given back once under
// a policy, as it is counted allowed once (see Event.CountedFurtherOut).
// Stats counts r either way: this middleware gave back units of its own.
func (m *Middleware) giveBack(r *http.Request, res *Result, give uint64, taking time.Time, countedOut uint64) uint64 {
	ctx, cancel := afterContext(r)
	defer cancel()
	if err := res.pr.GiveBack(ctx, m.decider(res), m.clock.Now().Sub(taking), give); err != nil {
		m.stats.storeErrors.Add(1)
		m.report(r, fmt.Errorf("middleware: giving back the units of a response that does not count: %w", err))
		return 0
	}
	if !res.GaveBack() {
		return 0
	}
	m.stats.givenBack.Add(1)
	if gb, ok := m.obs.(GiveBackObserver); ok {
		// The i-th policy of res is the i-th of its mask.
		for i, b := 0, res.Mask(); b != 0; i, b = i+1, b&(b-1) {
			if res.Given(i) && countedOut&(b&-b) == 0 {
				gb.ObserveGiveBack(res.Policy(i).Name())
			}
		}
	}
	return give
}

// refusing answers r with answer, m answering it itself (a denial, a
// rejection, a 503). First it notes in the Results of the middlewares
// further out (in r's context) that a middleware further in answers r
// itself: those whose policies do not count the refusal give their units
// back as its status is written (see serveCounted). It writes only the
// Results of requests served by serveCounted (markCounting): the others,
// a Result handed to the shadow report among them, may be read by
// another goroutine. Then it tells m's Feedback, when it has a method
// Refused (see Feedback), and answers. The answer is written even when
// Refused panics, before the panic goes on: a client refused gets its
// answer (its Retry-After) whatever the Feedback does, and a recoverer
// further out finds the response written.
func (m *Middleware) refusing(r *http.Request, answer func()) {
	eachOuter(r.Context(), outerKey{}, 0, func(c *resultContext, _ time.Duration) bool {
		if c.res.marks&markCounting != 0 {
			c.res.refuseFurtherIn()
		}
		return true
	})
	if fb := m.fb.Load(); fb != nil && fb.refused != nil {
		defer answer()
		fb.refused.Refused()
		return
	}
	answer()
}

// setHeldHeaders sets the rate-limit headers of res, the decision of r
// held for held since (and perhaps refunded since, see setHeadersAt), in h
// under profile p, and notes in res that they were written, as serve does
// for one not held. The headers the middlewares further out wrote before
// the hold are counted after it too (see retimeOuter), less their members
// of the policies of redecided and ownOnly, and of those of merged whose
// members here supersede theirs (see unlistOuter), and with
// those of restate restated here (see restateOuter).
func (m *Middleware) setHeldHeaders(r *http.Request, h http.Header, p Profile, res *Result, outer *policy.Result, vals *[2]string, buf []byte, held time.Duration, redecided, ownOnly, merged uint64, restate []restated) {
	retimeOuter(r.Context(), h, held)
	setHeadersAt(h, headerProfile(p, res), &res.pr, outer, m.clock.Now, m.pkSecret, vals, buf, held)
	if holdsValues(p, &res.pr, outer) {
		res.wrote = uint8(p) + 1
		keepRestated(r.Context(), h, p, res, outer, m.clock.Now)
	}
	if redecided|ownOnly|merged != 0 {
		unlistOuter(r.Context(), h, res, vals, redecided, ownOnly, merged, held, m.clock.Now)
	}
	restateOuter(h, p, res, outer, m.clock.Now, held, restate)
}

// refundTimeout bounds a refund, which runs after the request's context
// has ended, and a give-back, which runs after the handler returned.
const refundTimeout = time.Second

// afterContext returns the context of a store call for r made once r's own
// context may have ended (a refund, a give-back): r's values without its
// cancellation, bounded by refundTimeout.
func afterContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(r.Context()), refundTimeout)
}

// decider returns the store whose Take decided res: the fallback store when
// it did (res.fallback), else the middleware's.
func (m *Middleware) decider(res *Result) algorithms.Store {
	if res.fallback {
		return m.failure.store
	}
	return m.store
}

// refund gives back the queue places of res, a request held for waited
// that will not be served, to the store that decided it; a failure goes to
// the error hook. When the store is an [algorithms.Refunder] and its Refund
// succeeds, res then holds the store's decisions after the refund
// ([policy.Result.Refund]); otherwise it keeps the Take's.
func (m *Middleware) refund(r *http.Request, res *Result, waited time.Duration) {
	store := m.decider(res)
	if _, ok := store.(algorithms.Refunder); !ok {
		return
	}
	ctx, cancel := afterContext(r)
	defer cancel()
	if err := res.pr.Refund(ctx, store, waited); err != nil {
		m.stats.storeErrors.Add(1)
		m.report(r, fmt.Errorf("middleware: giving back a leaky_queue place: %w", err))
	}
}

// observe passes the outcome of a request to the observer, if any. The
// decision latency runs from start (read only when there is an observer)
// to now. countedOut are the policies of res (a mask over its Set) that
// a middleware further out counted the request under (see
// Event.CountedFurtherOut).
func (m *Middleware) observe(r *http.Request, res *Result, o Outcome, start time.Time, countedOut uint64) {
	if m.obs != nil { // inlined: without an observer, this check is the cost
		m.emit(r, res, o, start, countedOut)
	}
}

func (m *Middleware) emit(r *http.Request, res *Result, o Outcome, start time.Time, countedOut uint64) {
	m.obs.ObserveRequest(Event{Request: r, Result: res, Outcome: o, Latency: m.clock.Now().Sub(start), pattern: m.pattern, countedOut: countedOut})
}

// observeHeld passes the outcome of a request held for a leaky_queue Delay
// to the observer, if any, when the hold has ended: what came of the
// request is known only then. The decision latency runs from start to
// held, when the hold began; the request was held for waited (see
// Event.Held).
func (m *Middleware) observeHeld(r *http.Request, res *Result, o Outcome, start, held time.Time, waited time.Duration, countedOut uint64) {
	if m.obs != nil {
		m.obs.ObserveRequest(Event{Request: r, Result: res, Outcome: o, Latency: held.Sub(start), pattern: m.pattern,
			held: max(waited, 0), wasHeld: true, countedOut: countedOut})
	}
}

// observeEarly passes to the observer, if any, the outcome (Abandoned) of
// a request refused at once because its context's deadline, left away,
// comes before the end of its leaky_queue Delay.
func (m *Middleware) observeEarly(r *http.Request, res *Result, start time.Time, left time.Duration, countedOut uint64) {
	if m.obs != nil {
		m.obs.ObserveRequest(Event{Request: r, Result: res, Outcome: Abandoned, Latency: m.clock.Now().Sub(start), pattern: m.pattern,
			early: true, left: max(left, 0), countedOut: countedOut})
	}
}

// untilDeadline returns the time left until the deadline of ctx, read on
// the system clock as context deadlines are, and whether it has one.
func untilDeadline(ctx context.Context) (time.Duration, bool) {
	dl, ok := ctx.Deadline()
	if !ok {
		return 0, false
	}
	return time.Until(dl), true
}

// shadowed reports whether the middleware is in shadow mode, in which case
// it counts and reports the request it would have rejected, and the caller
// lets it through. The report gets a copy of the request next is then
// handed, with its context (rc), as the handler and the deny handler do:
// FromContext there finds res (see reportShadow).
func (m *Middleware) shadowed(caller, r *http.Request, rc *resultContext, res *Result) bool {
	if !m.shadow {
		return false
	}
	m.stats.shadowDenied.Add(1)
	if m.onShadow != nil {
		m.reportShadow(caller, rc.request(r), res)
	}
	return true
}

// reportShadow hands the shadow report res and a copy of c, the request
// next is then handed, a request of its own: the report may hand it to
// another goroutine (a batching logger), and the router in next writes
// the request it serves (its pattern and path values) while that goroutine
// reads the report's. It allocates that copy, for a request reported only.
// What the report set on it (a form it parsed) is given to c, for next,
// and to caller even when it panics, as a deny handler's is (see refuse);
// when it returns, pass gives it again after next.
func (m *Middleware) reportShadow(caller, c *http.Request, res *Result) {
	rep := new(http.Request)
	*rep = *c
	defer reqcopy.Back(caller, rep)
	m.onShadow(rep, res)
	reqcopy.Forms(c, rep)
}

// take decides res with the store, the breaker and the fallback.
//
// Only a failure of the store's backend counts towards the breaker (see
// [WithBreaker]): not a call its request's client ended (cancelled), nor
// one that reached its request's deadline without the backend having had
// a fair chance to meet it (the rule of package internal/deadline, which
// the Redis store's breaker follows too), nor an invalid check, nor a
// closed store, nor an error about one key's stored value, which is the
// backend's answer and ends a run of failures as a success does. A probe
// whose call told nothing about the backend hands the probe on to the
// next request.
func (m *Middleware) take(r *http.Request, res *Result) error {
	ctx := r.Context()
	if res.Len() == 0 {
		// Every policy that applies was left out (policy.SkipPolicy, no
		// key): no store call is needed and none is made. It says
		// nothing of the backend, and the breaker has nothing to keep
		// from it.
		return res.pr.Take(ctx, m.store)
	}
	var probe int64 // the breaker's reopening time this request set, as its probe
	var ticket deadline.Ticket
	if m.breakAfter > 0 {
		if m.failures.Load() >= m.breakAfter {
			now := m.clock.Now().UnixNano()
			until := m.openUntil.Load()
			probe = m.reopenAt(now)
			if now < until || !m.openUntil.CompareAndSwap(until, probe) {
				m.stats.breakerOpen.Add(1)
				res.marks |= markStoreFailed
				m.failed(r, ErrBreakerOpen, false)
				return m.fallback(ctx, r, res, ErrBreakerOpen)
			}
			// This request probes the store.
		}
		ticket = m.deadlines.Watch(ctx)
	}
	err := res.pr.Take(ctx, m.store)
	if err == nil {
		if err = badDelay(res); err == nil {
			m.answered()
			return nil
		}
	}
	switch {
	case errors.Is(err, errBadDelay):
		// The backend answered, with a decision its policy cannot give.
		m.answered()
	case errors.Is(err, algorithms.ErrKeyState):
		// The backend answered, about this request's key.
		m.answered()
	case errors.Is(err, algorithms.ErrTryAgain):
		// The backend answered, refusing the call for now (a Redis
		// Cluster slot migrating): it is up.
		m.answered()
	case errors.Is(err, algorithms.ErrCircuitOpen):
		// The store's own breaker refused the call, unsent: it says
		// nothing of the backend the other keys need (a Redis Cluster's
		// other masters), and cost no wait to save.
		m.handOn(probe)
	case errors.Is(err, policy.ErrCost):
		// A cost above a lowered limit that the store, which cannot
		// peek, was not asked to decide (see policy.Result.Take): the
		// request's, refused as out of range, not the store's failure.
		m.handOn(probe)
		return err
	case errors.Is(err, algorithms.ErrInvalidSpec), errors.Is(err, algorithms.ErrInvalidCost),
		errors.Is(err, algorithms.ErrClosed):
		// A check the store refused before its backend saw it, or a store
		// its owner closed: nothing said of the backend.
		m.handOn(probe)
	case m.deadlines.Ignores(ticket, ctx.Err()):
		// The client went away, or the request's deadline gave the
		// backend no fair chance.
		m.handOn(probe)
		m.report(r, err)
		return err
	default:
		res.marks |= markStoreFailed
		if n := m.failed(r, err, true); m.breakAfter > 0 && (n == m.breakAfter || probe != 0) {
			// The failure that opens the circuit, or a failed probe:
			// open for a cooldown from now (a probe's own reopening
			// time counted from when it began, which a backend slow to
			// fail may have passed already).
			m.openUntil.Store(m.reopenAt(m.clock.Now().UnixNano()))
		}
		return m.fallback(ctx, r, res, err)
	}
	res.marks |= markStoreFailed
	m.stats.storeErrors.Add(1)
	m.report(r, err)
	if errors.Is(err, algorithms.ErrClosed) {
		m.logStoreClosed(err)
	}
	return m.fallback(ctx, r, res, err)
}

// logStoreClosed logs on slog.Default, once, that the store was closed,
// for a middleware without an observer (one with an observer tells it of
// each such request: a LogObserver logs them, the metrics count them). A
// closed store changes no State, so that logState says nothing of it, yet
// it lifts every limit under the default fail-open mode: a store closed
// too early (the defer of a function that builds the router and returns)
// would leave the service unlimited, unseen.
func (m *Middleware) logStoreClosed(err error) {
	if m.obs != nil || !m.closedStoreLogged.CompareAndSwap(false, true) {
		return
	}
	slog.Default().LogAttrs(context.Background(), slog.LevelError,
		"ratekeeper: store closed; every request gets the failure mode (under fail open, no limit holds): close the store only once the server has stopped",
		slog.Any("policies", setNames(m.Set())), slog.Any("error", err))
}

// errBadDelay marks a store's admitted decision whose Delay its policy
// cannot give (see badDelay).
var errBadDelay = errors.New("middleware: store returned a Delay its policy cannot give")

// badDelay returns an error wrapping errBadDelay when an admitted decision
// of res carries a Delay that its policy cannot give: negative, on a kind
// other than leaky_queue, or beyond the queue's MaxDelay. A broken or
// hostile store could otherwise hold requests for as long as it says.
func badDelay(res *Result) error {
	ds := resultroom.Decisions(&res.pr) // read in place: most have no Delay
	for i := range ds {
		d := &ds[i]
		if d.Delay == 0 || !d.Allowed {
			continue
		}
		spec := res.Policy(i).Spec()
		if d.Delay < 0 || spec.Algorithm != algorithms.LeakyQueue || d.Delay > spec.MaxDelay {
			return fmt.Errorf("%w: %s for policy %q (%s, MaxDelay %s)", errBadDelay, d.Delay, res.Policy(i).Name(), spec.Algorithm, spec.MaxDelay)
		}
	}
	return nil
}

// answered notes an answer of the store's backend: it ends a run of
// failures, and shows the backend answering to the calls with a deadline
// that began before it (see deadline.Calls.Replied).
func (m *Middleware) answered() {
	m.deadlines.Replied()
	if m.failures.Load() != 0 {
		m.recovered()
	}
	if m.statePending.Load() && !stateLogRecent(m.clock.Now().UnixNano(), m.stateLoggedAt.Load()) {
		// A State left out to log, and a record is due: the requests
		// of the second of the last record take no lock.
		m.flushStateLog()
	}
}

// reopenAt returns the instant, in Unix nanoseconds, at which the breaker
// opened at now lets a probe through: now plus the cooldown, or the last
// instant an int64 holds when the sum does not fit (a cooldown near the
// largest Duration), so that the breaker stays open rather than wrapping
// around to an instant in the past.
func (m *Middleware) reopenAt(now int64) int64 {
	if now > math.MaxInt64-int64(m.cooldown) {
		return math.MaxInt64
	}
	return now + int64(m.cooldown)
}

// handOn lets the next request probe the store at once when this one was
// the breaker's probe (probe is the reopening time it set; 0 when it was
// not) and its call told nothing about the backend.
func (m *Middleware) handOn(probe int64) {
	if probe != 0 {
		m.openUntil.CompareAndSwap(probe, 0)
	}
}

// recovered notes a store answer after failures.
func (m *Middleware) recovered() {
	m.stateMu.Lock()
	defer m.stateMu.Unlock()
	m.failures.Store(0)
	m.setState(StateHealthy)
}

// setState records the State the store's last answer put the middleware in
// and tells the observer of a change. The caller holds stateMu, so that
// the observer is told the changes in the order they are made, each from
// the State the one before went to.
func (m *Middleware) setState(s State) {
	old := State(m.state.Swap(uint32(s)))
	if old == s {
		return
	}
	if m.obs != nil {
		if !m.closed {
			m.obs.ObserveState(old, s)
		}
	} else {
		m.logState(old, s)
	}
}

// Close counts m out of its observers' failure state, for a middleware
// being discarded: one replaced by a middleware built from a new
// configuration (a change [Middleware.ApplyConfig] cannot make in place,
// such as the failure mode), which shares its observers, as a
// prommetrics.Metrics registered once must be shared. Without Close, a
// store that was failing under the discarded middleware would hold the
// failure_state of prommetrics and otelmetrics at its failing State for
// ever, since no answer of the store would ever move it back. Each
// observer that is a [CloseObserver] is told the State m is in (the
// metrics take it out of failure_state), once, after every change of
// State m told it; from then on m tells its observers of no change of
// State, and of no change of its limits ([Middleware.SetLimit], as an
// adaptive Controller still fed by m's last requests makes, or new
// policies). A [SharedObserver], as prommetrics' and otelmetrics' are,
// gives m an observer of its own, which takes m's limits out of the
// gauges: a policy only m had loses them, and one that the middleware
// replacing m has keeps that one's. A middleware without observers, whose
// changes are logged (see [WithLogger]), goes on logging them.
//
// Close does not stop m: a request still in flight, or any m serves
// after Close, is decided as before (the failure mode and the breaker
// apply), counted in [Middleware.Stats] and reported to the observers'
// ObserveRequest, and [Middleware.State] still reports m's State; its
// limits still change, unreported. It does not close the store, which the
// caller owns, nor the fallback store. It is safe to call concurrently
// with requests and changes of limits, and more than once (the calls
// after the first do nothing). It returns nil: it is an io.Closer.
func (m *Middleware) Close() error {
	m.rules.mu.Lock()
	m.rules.closed = true
	m.rules.mu.Unlock()
	m.stateMu.Lock()
	defer m.stateMu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	if co, ok := m.obs.(CloseObserver); ok {
		co.ObserveClose(m.State())
	}
	return nil
}

// logState logs a change of state on slog.Default, as a LogObserver
// would, for a middleware without an observer: a store failing silently
// would lift every limit unseen (an observer is told of the change
// instead: a LogObserver logs it, the metrics packages export it). A
// flapping store could change the state at every request, so at most one
// record is written a second (on the middleware's clock), and the changes
// left out in between are counted in the next one (changes_not_logged).
// The caller holds stateMu.
//
// When the changes left out end in a State other than the one last logged
// (a store that failed and answered again within the second, or answered
// and failed again), the first request after the second that the store
// answers, or that fails, logs the change to it (see flushStateLog): the
// log's last record tells the State once the store has settled, up or
// down.
func (m *Middleware) logState(from, to State) {
	now := m.clock.Now().UnixNano()
	m.stateTold = to
	if stateLogRecent(now, m.stateLogged) {
		m.stateUnlogged++
		m.statePending.Store(m.stateTold != m.stateLoggedTo)
		return
	}
	m.writeStateLog(now, from, to)
}

// stateLogRecent reports whether a record of a change of state written at
// logged (0: none) is less than a second before now (a clock gone back
// counts as not).
func stateLogRecent(now, logged int64) bool {
	return logged != 0 && now-logged < int64(time.Second) && now >= logged
}

// writeStateLog logs the change from → to at now, with the changes left
// out before it. The caller holds stateMu.
func (m *Middleware) writeStateLog(now int64, from, to State) {
	m.stateLogged, m.stateLoggedTo = now, to
	m.stateLoggedAt.Store(now)
	m.statePending.Store(false)
	// The policies tell the records of nested middlewares apart (a global
	// one and a login one on one store), which log here alike.
	extra := []slog.Attr{slog.Any("policies", setNames(m.Set()))}
	if m.stateUnlogged > 0 {
		extra = append(extra, slog.Int64("changes_not_logged", m.stateUnlogged))
		m.stateUnlogged = 0
	}
	logStateChange(slog.Default(), from, to, extra...)
}

// flushStateLog logs the State the changes left out by logState ended in,
// from the one last logged, once a second has passed since the last
// record.
func (m *Middleware) flushStateLog() {
	m.stateMu.Lock()
	defer m.stateMu.Unlock()
	m.flushStateLogLocked()
}

// flushStateLogLocked is flushStateLog for a caller that holds stateMu.
func (m *Middleware) flushStateLogLocked() {
	if !m.statePending.Load() {
		return
	}
	if now := m.clock.Now().UnixNano(); !stateLogRecent(now, m.stateLogged) {
		m.writeStateLog(now, m.stateLoggedTo, m.stateTold)
	}
}

// State returns the failure State the store's last answer put the
// middleware in.
func (m *Middleware) State() State { return State(m.state.Load()) }

// failed counts and reports a store failure, and returns the failures in
// a row; a failure counts towards the breaker (count) unless the breaker
// itself answered. The count and the State change together: a success
// that sees the count reset the State after this failure set it.
func (m *Middleware) failed(r *http.Request, err error, count bool) int64 {
	m.stats.storeErrors.Add(1)
	m.stateMu.Lock()
	var n int64
	if count {
		n = m.failures.Add(1)
	}
	m.setState(m.failure.state())
	if m.statePending.Load() {
		// A failure left out within the second of a recovery's record,
		// the store down since: logged once the second has passed.
		m.flushStateLogLocked()
	}
	m.stateMu.Unlock()
	m.report(r, err)
	return n
}

// fallback decides res with the fallback store, if any; it returns err when
// there is none, when the request's context has ended (the request is
// answered as abandoned, as when the store's call ends so; the stores of
// this module would fail the fallback call for that alone, counted as a
// failure of the fallback), or when the fallback fails too. The
// fallback's failure is counted and reported, and leaves the State as the
// store's error left it: the State follows the store's backend (an error
// that said nothing of it, or its answer about one key, came before a
// fallback too).
func (m *Middleware) fallback(ctx context.Context, r *http.Request, res *Result, err error) error {
	if m.failure.mode != fallBack || ctx.Err() != nil {
		return err
	}
	if ferr := res.pr.Take(ctx, m.failure.store); ferr != nil {
		ferr = fmt.Errorf("middleware: fallback: %w", ferr)
		res.marks |= markStoreFailed
		m.stats.storeErrors.Add(1)
		m.report(r, ferr)
		return errors.Join(err, ferr)
	}
	m.stats.fallback.Add(1)
	res.fallback = true
	res.err = err
	return nil
}

func (m *Middleware) report(r *http.Request, err error) {
	if m.onError != nil {
		m.onError(r, err)
	}
}

// warn tells one of the once-only warnings about the middleware's setup
// (ErrUnrouted, ErrForwardingIgnored, ErrCountedTwice) to the error handler
// and, when the middleware logs (WithLogger, or a LogObserver among its
// observers), to the log, at Warn. With neither, it is logged on
// slog.Default: each of them is a limit that does not hold as written
// (a policy that never applies, one limit shared by every client, a
// request counted twice), not to pass unseen under the defaults.
func (m *Middleware) warn(r *http.Request, err error) {
	m.report(r, err)
	switch {
	case m.warnLog != nil:
		m.warnLog.setupWarning(err)
	case m.onError == nil:
		logSetupWarning(slog.Default(), err)
	}
}

// findLogObserver returns the first LogObserver among obs, or nil.
func findLogObserver(obs Observer) *LogObserver {
	switch o := obs.(type) {
	case *LogObserver:
		return o
	case observers:
		for _, x := range o {
			if l := findLogObserver(x); l != nil {
				return l
			}
		}
	}
	return nil
}

// ErrBreakerOpen is the error of a request the circuit breaker kept from
// the store (see [WithBreaker]).
var ErrBreakerOpen = errors.New("middleware: circuit breaker open: store not called")

// sleep waits for d or until ctx is done. A ctx done already ends it at
// once, however short d: a select between a timer that has fired and a
// done ctx would pick either.
func sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// resultContext is the request context carrying a Result, and the request
// passed on with it: everything the middleware allocates per request, in
// one allocation, with the room of the Result's checks and decisions
// after it (see newResultContext). vals and buf hold the header values
// (see setHeadersAt).
type resultContext struct {
	context.Context
	res Result
	headerValues
	req http.Request
}

// The request contexts, each with the room it needs and no more (each
// fills one malloc size class: see TestResultContextSizeClass):
// narrowContext for one policy whose header values fit buf (the IETF
// value of one policy), the wide ones, with longer header values, for one
// to four policies. A request to which more apply gets a
// wideResultContext, and its Result room of its own.
type (
	narrowContext struct {
		resultContext
		room resultroom.One
	}
	wideOneContext struct {
		resultContext
		long [128]byte
		room resultroom.One
	}
	wideTwoContext struct {
		resultContext
		long [128]byte
		room resultroom.Two
	}
	wideThreeContext struct {
		resultContext
		long [128]byte
		room resultroom.Three
	}
	wideResultContext struct {
		resultContext
		long [128]byte
		room resultroom.Four
	}
)

// headerValues holds the header values of one response (see setHeadersAt).
type headerValues struct {
	vals [2]string
	buf  [48]byte
}

// wideHeaderValues is headerValues with room for longer values.
type wideHeaderValues struct {
	headerValues
	long [128]byte
}

// narrow reports whether the header values of a request to which the
// policies of mask apply are likely to fit in headerValues.buf: one policy,
// no pk parameter, not Draft7's dictionary.
func (m *Middleware) narrow(mask uint64) bool {
	return mask&(mask-1) == 0 && m.pkSecret == nil && m.profile != Draft7
}

// resultPool recycles the Results of a middleware without context (see
// WithoutContext).
var resultPool = sync.Pool{New: func() any { return new(Result) }}

// newResultContext allocates the context of a request to which the
// policies of mask apply, with room for their checks and decisions, and
// returns the buffer its header values are to be built in.
func (m *Middleware) newResultContext(r *http.Request, mask uint64) (*resultContext, []byte) {
	switch bits.OnesCount64(mask) {
	case 1:
		if m.narrow(mask) {
			c := new(narrowContext)
			c.init(r, &c.room)
			return &c.resultContext, c.buf[:0]
		}
		c := new(wideOneContext)
		c.init(r, &c.room)
		return &c.resultContext, c.long[:0]
	case 2:
		c := new(wideTwoContext)
		c.init(r, &c.room)
		return &c.resultContext, c.long[:0]
	case 3:
		c := new(wideThreeContext)
		c.init(r, &c.room)
		return &c.resultContext, c.long[:0]
	}
	c := new(wideResultContext)
	c.init(r, &c.room)
	return &c.resultContext, c.long[:0]
}

// init makes a new rc the context of r, its Result keeping its checks,
// decisions and keys in room, which is part of the same allocation.
func (rc *resultContext) init(r *http.Request, room resultroom.Room) {
	rc.Context = r.Context()
	resultroom.Give(&rc.res.pr, room)
}

// request returns r with rc as its context, as r.WithContext(rc) does, but
// held in rc: the inlined WithContext's new Request does not escape, so
// only rc is allocated. Without context (rc is nil) it returns r. It is
// built once: a later call (the handler after the shadow report) returns
// the same request, with the forms the report parsed on its copy of it
// (see reportShadow).
func (rc *resultContext) request(r *http.Request) *http.Request {
	if rc == nil {
		return r
	}
	if rc.req.Context() != context.Context(rc) {
		rc.req = *r.WithContext(rc)
	}
	return &rc.req
}

// pass serves c, the request the middleware passes on for r (r itself,
// or a copy of it under the middleware's context: see request,
// heldRequest, adopting), with next, and then gives r what next set on
// the copy (reqcopy.Back), as next would have set it on r: the forms it
// parsed, which the caller reads after it and net/http cleans up for its
// own request only (the files of a multipart form), and the pattern and
// path values a router in next matched, which a metrics middleware
// further out reads. It does so even when next panics, for a caller that
// recovers. For r itself, it costs a comparison.
func pass(w http.ResponseWriter, r, c *http.Request, next http.Handler) {
	if c != r {
		defer reqcopy.Back(r, c)
	}
	next.ServeHTTP(w, c)
}

// refuse answers r in place of next with answer, which calls a deny or
// reject handler (or the default one) with c, the request next would have
// been handed (rc.request(r)), and then gives caller what the handler set
// on c, as pass does for next: a handler may parse the form of a request
// refused (whose files net/http removes for its own request only). It
// does so even when the handler panics, for a caller that recovers (a
// client over its limit would otherwise leave its upload on disk).
func refuse(caller, r *http.Request, rc *resultContext, answer func(c *http.Request)) {
	defer answered(caller, r, rc)
	answer(rc.request(r))
}

// answered gives caller what the deny or reject handler that answered r
// in place of next set on the request it was handed (see refuse).
func answered(caller, r *http.Request, rc *resultContext) {
	reqcopy.Back(caller, rc.request(r))
}

type contextKey struct{}

// wroteKey asks a request's context for the Result of the innermost
// middleware that wrote rate-limit headers.
type wroteKey struct{}

// chainKey asks a request's context for the innermost of the middlewares
// that wrote rate-limit headers (a *resultContext) and of those that held
// the request (a *heldContext), for retimeOuter.
type chainKey struct{}

// Value returns the Result for the middleware's key, and for wroteKey when
// its headers were written; itself for chainKey then.
func (rc *resultContext) Value(key any) any {
	switch key.(type) {
	case contextKey:
		return &rc.res
	case wroteKey:
		if rc.res.wrote != 0 {
			return &rc.res
		}
	case chainKey:
		if rc.res.wrote != 0 {
			return rc
		}
	case outerKey:
		return rc
	}
	return rc.Context.Value(key)
}

// outerKey asks a request's context for the innermost of the middlewares
// that decided it (a *resultContext, whether it wrote headers or not) and
// of those that held it (a *heldContext), for outerWait.
type outerKey struct{}

// adopted are the policies of set (a mask over it) that a middleware left
// out of its decision because only middlewares in shadow mode further out
// counted the request under them (see unrepeated): those do not refuse its
// retry, but this one decides the policies then, and does (see outerWait,
// and adoptedContext for the middlewares further in). guards are those
// it decided without a guard that only middlewares in shadow mode further
// out counted the request under: it decides them with that guard on the
// retry, once those deny it, and refuses it while the guard lacks units.
type adopted struct {
	set    *policy.Set
	mask   uint64
	guards uint64
	// folds are the policies of set that its Result checked on their
	// first guard's state alone (nested.Ops.Folded), before any was
	// left out: matched as unrepeated matched them.
	folds uint64
}

// match returns the policy of a that p, a policy of a middleware further
// out, counts for: one of a's mask that p is, or one of a's guards one of
// whose guards p counts in the state of; nil if none. They are matched as
// unrepeated matches them (see meets), since the same policy need not be
// the same *policy.Policy in both (a copy a reload tightened, one lowered
// by SetLimit, one built twice). pFolded says that the Result further
// out checked p on its first guard's state alone (nested.Ops.Folded).
func (a adopted) match(p *policy.Policy, pFolded bool) *policy.Policy {
	for b := a.mask | a.guards; b != 0; b &= b - 1 {
		if q := a.set.Policy(bits.TrailingZeros64(b)); q == p || q.Name() == p.Name() {
			if same, gs := meets(q, p, b&-b&a.folds != 0, pFolded); b&-b&a.mask != 0 && same || b&-b&a.guards != 0 && gs != 0 {
				return q
			}
			return nil
		}
	}
	return nil
}

// adoptedContext is the context of a request that a middleware not in
// shadow mode passed on after it left out policies that only middlewares
// in shadow mode further out counted (own, see adopted): it decides them
// on a retry, so a middleware further in that refuses the request waits
// for them too (see outerWait). It is allocated, with the request it is
// the context of, only for such a request.
type adoptedContext struct {
	context.Context
	own adopted
	req http.Request
}

// adoptedKey asks a request's context for the innermost adoptedContext.
type adoptedKey struct{}

// Value returns the adoptedContext for adoptedKey.
func (c *adoptedContext) Value(key any) any {
	if _, ok := key.(adoptedKey); ok {
		return c
	}
	return c.Context.Value(key)
}

// adopting returns r, to be passed on by the middleware with its context
// rc (nil without context: r as it is), under an adoptedContext holding
// own, the policies it left out that only middlewares in shadow mode
// further out counted. A middleware in shadow mode enforces nothing on
// the retry: it passes r on as it is. It is not inlined, so that decide,
// on every request's path, does not grow by the rare case.
//
//go:noinline
func (m *Middleware) adopting(r *http.Request, rc *resultContext, own adopted) *http.Request {
	if own.mask|own.guards == 0 || m.shadow || rc == nil {
		return r
	}
	ac := &adoptedContext{Context: r.Context(), own: own}
	ac.req = *r.WithContext(ac)
	return &ac.req
}

// adoptedFurtherOut returns the policy that a middleware further out in
// ctx, not in shadow mode, left out, or decided without a guard, as one
// that only middlewares in shadow mode further out than it counted, and
// that p counts for (see adopted.match); nil if none (see adoptedContext).
func adoptedFurtherOut(ctx context.Context, p *policy.Policy, pFolded bool) *policy.Policy {
	for v := ctx.Value(adoptedKey{}); v != nil; {
		c, ok := v.(*adoptedContext)
		if !ok {
			return nil
		}
		if q := c.own.match(p, pFolded); q != nil {
			return q
		}
		v = c.Context.Value(adoptedKey{})
	}
	return nil
}

// outerWait returns how long a retry of r, which a middleware further in
// than all those of its context refuses with status, would still be
// refused by them: those (not in shadow mode) that admitted it with their
// last units, so that its retry finds less than its cost, wait for their
// quota to grow back to its cost (see unitsAfter), counted from now:
// reduced by the holds since (see retimeOuter). A policy that does not
// count a response of status ([policy.CountIf]) gives the request's units
// back once the response is written, and is not waited for. A middleware
// in shadow mode refuses nothing, and is waited for only under the
// policies that a middleware not in shadow mode left out because it
// counted them, or decided without a guard it counted: the refusing one
// (own, see adopted) or one in between (see adoptedContext). That one
// decides them on the retry, and refuses it while they lack units: it is
// waited for under that one's Spec and guards alone, of the states it
// counted (see waitUnder), not under its merged decision (a copy lowered
// there, and denied on the retry, is no one's to enforce). A middleware
// built WithoutContext is not seen, nor its hold, nor what it left out.
func outerWait(r *http.Request, status int, own adopted) time.Duration {
	var wait time.Duration
	eachOuter(r.Context(), outerKey{}, 0, func(c *resultContext, held time.Duration) bool {
		res := &c.res.pr
		if !res.Taken() || c.res.shadow && !res.Allowed() {
			return true
		}
		for i := range res.Len() {
			if c.res.shadow {
				p := res.Policy(i)
				q := own.match(p, nest.Folded(res, i))
				if q == nil {
					q = adoptedFurtherOut(r.Context(), p, nest.Folded(res, i))
				}
				if q == nil || !p.Counts(r, status) {
					continue
				}
				// The retry is decided under q's Spec and guards: of
				// the states p counted, those alone are waited for, at
				// the limits q judges them at.
				wait = max(wait, waitUnder(res, i, q.Spec(), q.Spec().Limit, held))
				for _, g := range q.Guards() {
					wait = max(wait, waitUnder(res, i, g, q.GuardLimit(g), held))
				}
				continue
			}
			if d := res.Decision(i); d.Allowed && d.Remaining < res.Cost(i) && res.Policy(i).Counts(r, status) {
				wait = max(wait, since(unitsAfter(res.Policy(i).Spec(), d, res.Cost(i)-d.Remaining), held))
			}
		}
		return true
	})
	return wait
}

// waitUnder returns how long, from now, after res admitted its i-th
// policy held ago, that policy's state under spec (its own Spec or a
// guard's, see nested.Ops.DecisionUnder), judged at limit, holds less
// than its cost: 0 when it holds enough, or res did not count it under
// spec. res may have judged that state at another limit (a window
// kind's guard is judged at its policy's limit, see
// policy.Policy.GuardLimit); its decision is moved to limit (see
// judgedAt).
func waitUnder(res *policy.Result, i int, spec algorithms.Spec, limit int64, held time.Duration) time.Duration {
	d, ok := nest.DecisionUnder(res, i, spec)
	if !ok || !d.Allowed {
		return 0
	}
	if d = judgedAt(spec, d, limit); d.Remaining < res.Cost(i) {
		return since(unitsAfter(spec, d, res.Cost(i)-d.Remaining), held)
	}
	return 0
}

// judgedAt returns d, an admitted decision under spec, as a check of
// spec judged at limit (algorithms.Check.Limit) would have reported it:
// for a window kind, whose state counts the units whatever the limit,
// Remaining moved by the difference of the limits, negative when the
// state holds more than limit, and the waits the same; d itself for the
// other kinds, which are judged at their own limit alone.
func judgedAt(spec algorithms.Spec, d algorithms.Decision, limit int64) algorithms.Decision {
	if spec.Algorithm.Windowed() && d.Limit != limit {
		d.Remaining += limit - d.Limit
		d.Limit = limit
	}
	return d
}

// unitsAfter returns how long after d, an admitted decision under spec,
// the allowance has need more units than d.Remaining if nothing else
// arrives: d.NextAfter for one (the wait for the next unit); for more,
// a fixed window's NextAfter still (its units all come back at the
// window's end), a bucket's or a queue's NextAfter and then need-1 more
// units at its rate (Limit per Window), and for the sliding kinds, whose
// later units come back at instants the decision does not give,
// ResetAfter, when the whole allowance is back. It is never after
// ResetAfter, nor before NextAfter.
func unitsAfter(spec algorithms.Spec, d algorithms.Decision, need int64) time.Duration {
	if need <= 1 {
		return d.NextAfter
	}
	full := max(d.ResetAfter, d.NextAfter)
	switch spec.Algorithm {
	case algorithms.FixedWindow:
		return d.NextAfter
	case algorithms.TokenBucket, algorithms.LeakyBucket, algorithms.LeakyQueue:
		if spec.Limit <= 0 || d.NextAfter < 0 {
			return full
		}
		// (need-1)·Window/Limit, rounded up, without overflow.
		hi, lo := bits.Mul64(uint64(need-1), uint64(spec.Window))
		if hi >= uint64(spec.Limit) {
			return full
		}
		q, r := bits.Div64(hi, lo, uint64(spec.Limit))
		if r != 0 {
			q++
		}
		if q > uint64(full-d.NextAfter) {
			return full
		}
		return d.NextAfter + time.Duration(q)
	}
	return full
}

// eachOuter calls f with each middleware's context that key finds further
// out in ctx (chainKey or outerKey), the innermost first, and held plus
// the holds of the middlewares between it and ctx (their heldContexts),
// until f returns false.
func eachOuter(ctx context.Context, key any, held time.Duration, f func(c *resultContext, held time.Duration) bool) {
	for v := ctx.Value(key); v != nil; {
		switch c := v.(type) {
		case *heldContext:
			held += c.held
			v = c.Context.Value(key)
		case *resultContext:
			if !f(c, held) {
				return
			}
			v = c.Context.Value(key)
		default:
			return
		}
	}
}

// heldContext is the context of a request a middleware held for a
// leaky_queue Delay, as it passes it on after the hold: the headers of the
// middlewares further out are stale by the hold, and a middleware further
// in that holds it again counts them after both holds (see retimeOuter).
// It is allocated with the request it is the context of, only for a
// request held.
type heldContext struct {
	context.Context
	held time.Duration
	req  http.Request
}

// Value returns the heldContext for chainKey and outerKey.
func (c *heldContext) Value(key any) any {
	switch key.(type) {
	case chainKey, outerKey:
		return c
	}
	return c.Context.Value(key)
}

// heldRequest returns r with its context rc (see request) under a
// heldContext saying it was held for held. Without context (rc is nil)
// it returns r: such a middleware passes the request on as it came.
func (rc *resultContext) heldRequest(r *http.Request, held time.Duration) *http.Request {
	if rc == nil {
		return r
	}
	hc := &heldContext{Context: rc, held: held}
	hc.req = *r.WithContext(hc)
	return &hc.req
}

// FromContext returns the Result of the innermost middleware that evaluated
// the request of ctx; ok is false when none did (no policy applied, the
// request was skipped, or there is no middleware). The Result is read-only.
// A Result found can hold no decisions: that of a request let through
// while the store failed (FailOpen, the default) has Taken false and
// StoreFailed true, so that Allowed is false and each Decision is the zero
// one, and that of a request whose every policy was left out for want of a
// key (policy.SkipPolicy) has Len 0. Check them before reading decisions.
// A middleware nested in others leaves out of its Result the policies
// they decided already (see [ErrCountedTwice]); one that leaves out all
// of its policies passes on the Result of the innermost of them.
//
// The request carrying the Result is a copy of the one the middleware was
// handed: a handler further out, which does not find the Result in its
// own request's context, sees after its handler returns the forms, pattern
// and path values set on the copy (see [Middleware.Handler]).
func FromContext(ctx context.Context) (res *Result, ok bool) {
	res, ok = ctx.Value(contextKey{}).(*Result)
	return res, ok
}

// Stats are the middleware's counters since it was built.
type Stats struct {
	// Denied counts requests answered 429 (including costs out of range).
	Denied int64
	// KeyRejected counts requests rejected because a policy found no key.
	KeyRejected int64
	// ShadowDenied counts requests shadow mode let through that it would
	// have rejected.
	ShadowDenied int64
	// StoreErrors counts failed store calls (including breaker-open ones):
	// the Takes that decide requests, and the refunds of leaky_queue places
	// and the give-backs of responses that do not count (policy.CountIf).
	// Not Peek, Reset or ResetKey, which return their errors.
	StoreErrors int64
	// FailedOpen counts requests let through unlimited because of a failure.
	FailedOpen int64
	// FailedClosed counts requests answered 503 because of a failure.
	FailedClosed int64
	// Fallback counts requests decided by the fallback store.
	Fallback int64
	// BreakerOpen counts requests for which the breaker skipped the store.
	BreakerOpen int64
	// Delayed counts requests held for a leaky_queue Delay.
	Delayed int64
	// Abandoned counts requests whose client went away (context done)
	// before the decision or while held, or whose context's deadline came
	// before the end of their leaky_queue Delay; they are not served. (In
	// shadow mode such a request is served, and counted in ShadowDenied.)
	Abandoned int64
	// GivenBack counts admitted requests whose units the middleware gave
	// back to the store after their response, because a policy's count
	// (policy.CountIf) said it does not count (whether or not units were
	// still there to come back). Each middleware counts its own: of
	// nested middlewares sharing such a policy whose copy further in is
	// lowered (SetLimit, a reload), both give back the units they took
	// for the request and both count it, where an observer is told the
	// give-back under the policy once (see [GiveBackObserver]).
	GivenBack int64
	// Unrouted counts requests whose route a policy with routes
	// (policy.WithRoutes) needed and that was not known, so that no such
	// policy applied: a router's 404, or, when it counts every request,
	// a middleware that runs before routing without WithPatternFunc (see
	// [ErrUnrouted]). A ServeMux's redirect of its own (to add a trailing
	// slash or clean the path), which policy.ServeMuxPattern reports as
	// policy.MuxRedirect, is not one. A request counts once, however many
	// layers of a middleware nested in itself do not know its route (a
	// ServeMux wrapped twice, chi's r.Use and a sub-router's r.Use); the
	// layer that counted it passes it on marked so, a copy of the request
	// (one allocation, for such a request only; two when the layer
	// matched it again under rules replaced since the outer layer, and
	// checks after the router whether it routed the request after all).
	// A middleware built
	// WithoutContext passes requests on as they came: nested in itself, it
	// counts one in each layer.
	Unrouted int64
}

type stats struct {
	denied, keyRejected, shadowDenied, storeErrors, failedOpen, failedClosed,
	fallback, breakerOpen, delayed, abandoned, unrouted, givenBack atomic.Int64
	unroutedTold atomic.Bool // ErrUnrouted went to the error handler
	twiceTold    atomic.Bool // ErrCountedTwice went to the error handler
	nameTold     atomic.Bool // ErrSameNameNested went to the error handler
}

// ErrUnrouted is told to the error handler (once per Middleware) when a
// policy with routes (policy.WithRoutes) does not apply to a request
// because its route is unknown, in a setup where that means the policy
// never applies as written:
//
//   - Without [WithPatternFunc], the first time the route of a request is
//     unknown: the middleware runs before the router has routed (around a
//     whole ServeMux, or in chi's top-level r.Use), where no request's
//     route is known, the router's 404s included, and such a policy never
//     applies. The fix is policy.ServeMuxPattern or policy.ChiPattern.
//   - With a pattern function, the first time the router routes a request
//     for which the function found no route (the message names the route
//     the router took): the function asks a router other than the one
//     that serves the requests.
//
// A request no route matches, which the router answers itself (404, 405;
// a scanner's /wp-admin, a browser's /favicon.ico), is no mistake when a
// pattern function tells so, and is not reported: [Stats] counts it
// (Unrouted), as it does every request whose route is unknown. Like
// [ErrForwardingIgnored], the report is also logged when the middleware
// logs, and on [log/slog.Default] when it has neither a log nor an error
// handler. The request is served; this is not a failure of the request.
var ErrUnrouted = errors.New("middleware: a policy with routes met a request whose route is unknown and did not apply")

// noteUnrouted counts r, a request whose route set, the rule set it was
// matched under, needed and did not know, unless a layer of m further out
// counted it, and, without a pattern function, tells the error handler
// the first time (see ErrUnrouted). It returns r as it goes on: marked as counted by m
// (unroutedContext), so that the layers of m further in (a middleware
// nested in itself) do not count it again; as it came without context
// (WithoutContext), or when counted further out. It reports too whether
// the caller is to ask, once next has served r, whether the router routed
// it (see unroutedServed): with a pattern function, before ErrUnrouted is
// told.
func (m *Middleware) noteUnrouted(r *http.Request, set *policy.Set) (*http.Request, bool) {
	if r.Context().Value(unroutedKey{m}) != nil {
		return r, false // counted further out
	}
	m.stats.unrouted.Add(1)
	if !m.noContext {
		r = markUnrouted(m, r)
	}
	if m.stats.unroutedTold.Load() {
		return r, false
	}
	if m.pattern != nil {
		// The pattern function says no route matches: a 404 the router
		// answers itself, unless it asks another router (unroutedServed).
		return r, true
	}
	// The message names the method, not the path, which may carry a
	// secret (/reset/<token>): the handler has the request.
	m.warnUnrouted(r, set, "the middleware runs before routing (around a whole ServeMux, or in chi's top-level r.Use) or around a handler that sets no route pattern, where no request's route is known, so these policies never apply; give it WithPatternFunc (policy.ServeMuxPattern(mux), policy.ChiPattern(r)), or install it after routing (on the routes: mux.Handle(pattern, m.Handler(h)), chi's r.With or a r.Group's r.Use)")
	return r, false
}

// unroutedServed tells the error handler, the first time, that r, a
// request for which the pattern function found no route, was routed all
// the same once next served it: the router set r.Pattern (a ServeMux, or
// chi for a middleware in its r.Use) to something other than before, the
// pattern r came with. A pattern ending in "/*" is not taken for a route:
// chi sets a mount's ("/api/*") before the sub-router answers 404 for a
// path it does not serve. set is the rule set r was matched under.
func (m *Middleware) unroutedServed(r *http.Request, before string, set *policy.Set) {
	p := r.Pattern
	if p == "" || p == before || strings.HasSuffix(p, "/*") || m.stats.unroutedTold.Load() {
		return
	}
	m.warnUnrouted(r, set, fmt.Sprintf("its pattern function found no route for the request, and the router then routed it to %q: the function asks another router than the one that serves the requests, so these policies never apply; give it that router (policy.ServeMuxPattern(mux) for the ServeMux the middleware wraps, policy.ChiPattern(r) for the chi router in whose r.Use it is)", p))
}

// warnUnrouted tells ErrUnrouted, why it is a mistake, to the error
// handler (see warn), unless it was told already. It names the policies
// with routes of set, the rules r was matched under: those that did not
// apply (the rules in force may have been replaced since, by rules without
// routes).
func (m *Middleware) warnUnrouted(r *http.Request, set *policy.Set, why string) {
	if !m.stats.unroutedTold.CompareAndSwap(false, true) {
		return
	}
	var names []string
	for _, p := range set.Policies() {
		if p.Routed() {
			names = append(names, strconv.Quote(p.Name()))
		}
	}
	m.warn(r, fmt.Errorf("%w (policies %s; first met on a %s request): %s",
		ErrUnrouted, strings.Join(names, ", "), r.Method, why))
}

// unroutedContext is the context of a request a layer of m counted as
// unrouted, as it passes it on: the layers of m further in do not count
// it again. It is allocated with the request it is the context of, only
// for a request counted.
type unroutedContext struct {
	context.Context
	m   *Middleware
	req http.Request
}

// unroutedKey asks a request's context whether a layer of m counted it.
type unroutedKey struct{ m *Middleware }

// Value returns c for the unroutedKey of its middleware.
func (c *unroutedContext) Value(key any) any {
	if k, ok := key.(unroutedKey); ok && k.m == c.m {
		return c
	}
	return c.Context.Value(key)
}

// markUnrouted returns a copy of r under an unroutedContext of m, in one
// allocation.
func markUnrouted(m *Middleware, r *http.Request) *http.Request {
	c := &unroutedContext{Context: r.Context(), m: m}
	c.req = *r.WithContext(c)
	return &c.req
}

// Stats returns a snapshot of the middleware's counters.
func (m *Middleware) Stats() Stats {
	s := &m.stats
	return Stats{
		Denied: s.denied.Load(), KeyRejected: s.keyRejected.Load(), ShadowDenied: s.shadowDenied.Load(),
		StoreErrors: s.storeErrors.Load(), FailedOpen: s.failedOpen.Load(), FailedClosed: s.failedClosed.Load(),
		Fallback: s.fallback.Load(), BreakerOpen: s.breakerOpen.Load(), Delayed: s.delayed.Load(),
		Abandoned: s.abandoned.Load(), Unrouted: s.unrouted.Load(), GivenBack: s.givenBack.Load(),
	}
}

// A Feedback is told how each request the middleware passed to its handler
// went: how long the handler took of its own (not waiting on its client,
// see [Middleware.SetFeedback]) and the status it answered (500 when it
// panicked); not of one whose client went away before the handler ended.
// An adaptive.Controller is one (package middleware/adaptive): the
// middleware feeds it the latency and status it judges the service's
// health by.
//
// A Feedback that also has a method Begin() interface{ End() } (an
// adaptive.Controller has) is told when each such request begins too, so
// that it sees the requests in flight (a handler that hangs sends no
// Observe): the middleware calls Begin just before the handler and End on
// what it returned once the request is over, whether Observe is called or
// not, or as the handler hijacks its connection; and End as the handler
// begins to wait on its client, Begin again as the wait ends (a request
// blocked on its client is not in flight for the service).
//
// A Feedback that also has a method Refused() (an adaptive.Controller
// has) is told of each request the middleware answers itself instead of
// passing it on: denied (429, by its own answer or the deny handler's,
// for want of quota or for a cost no policy admits), rejected for want
// of a key (400, 403), refused while the store fails under FailClosed,
// cut short in a leaky_queue hold or refused before it by the request's
// deadline, or whose context ended while the store decided it (503). It
// is called once per such request, before the answer is written, and is
// neither an Observe nor a Begin: the request says nothing of the
// service's health. A Refused that panics does not keep the answer from
// the client: the middleware writes it all the same (its status, its
// Retry-After), and the panic goes on from there, so that a recoverer
// further out (chi's middleware.Recoverer) finds the response written and
// sends it (net/http itself, recovering a handler's panic, closes the
// connection and sends nothing); the middlewares further out account for
// the refusal as they would without the panic. (The observer, the log and
// the error handler are called before it; one of theirs that panics
// leaves the request unanswered, as a panic of a hook does anywhere in
// the middleware.) It tells the Feedback that time passes while no
// request reaches the handler (an adaptive.Controller judges the periods
// that ended then, as its Evaluate would: a lowered limit that denies
// every request climbs back while the service stays healthy, see "Periods
// no request judges" in package middleware/adaptive). With nested
// middlewares, each tells its own Feedback of the requests it answers: a
// request an outer one refused never reaches the inner one.
//
// A handler of your own in front of the middleware that refuses requests
// itself (an authentication middleware's 401, a deny list's 403, a
// maintenance switch's 503) keeps them from it, and so from its
// Feedback: tell the Feedback yourself, calling its Refused
// (ctrl.Refused() on an adaptive.Controller) once for each request such
// a handler answers, as it answers, so that its periods are judged while
// none reaches the middleware (see the example of
// [Middleware.SetFeedback]).
type Feedback interface {
	Observe(latency time.Duration, status int)
}

// feedback boxes a Feedback for an atomic pointer, with its Refused
// method when it has one (see Feedback), found once by SetFeedback.
type feedback struct {
	f       Feedback
	refused interface{ Refused() }
}

// SetFeedback makes the middleware time every request it passes to its
// handler (allowed, skipped, matched by no policy, shadow-denied or let
// through by a failing store; not those it answers itself, nor one whose
// connection the handler hijacks, nor one whose client went away before
// the handler ended, whatever the handler answered then: its context
// cancelled by net/http says nothing of the service's health, while a
// server-side deadline that ran out does) and tell f its latency, read on
// the middleware's clock, and status (500 when the handler panicked). The
// latency is the handler's own time: the time it waits on its client,
// reading the request body (the middleware wraps the request's Body while
// the handler runs) and writing the response, is taken off, so that a
// client trickling its uploads or reading its responses slowly does not
// pass for a slow service (see "What is measured" in package
// middleware/adaptive). The handler's writer keeps the optional
// interfaces of the server's (Flusher, Hijacker and io.ReaderFrom over
// HTTP/1, Pusher over HTTP/2). A request the middleware answers itself
// is told to f's Refused method, if it has one (see [Feedback]), and is
// not timed. nil stops it, and so does a nil pointer (or function) of a
// type that implements Feedback, such as a *adaptive.Controller variable
// never assigned: it is taken as no Feedback, never called (as [New]
// tells a nil pointer given for a store, a clock or an observer from a
// value). It is safe to call while requests are served.
// A controller built on the middleware is set once both exist:
//
//	ctrl, err := adaptive.New(m, adaptive.Config{})
//	...
//	m.SetFeedback(ctrl)
//	http.ListenAndServe(addr, m.Handler(app))
//
// With nested middlewares (a global one and a stricter one on some
// routes), set the Feedback on the innermost only: an outer middleware's
// handler is the inner middleware, so it would also count the inner one's
// 429s, and a Feedback set on both counts each request twice. The inner
// one's Feedback is told nothing of the requests the outer one refuses.
// Likewise, a middleware nested in itself (its Handler wrapping a chain
// that passes it again, as r.Use(m.Handler) with r.With(m.Handler) on a
// route in chi) tells its Feedback of a request once per layer that
// serves it: each layer times the request it passes on, and a layer
// further out times the 429 of one further in as it would its handler's
// answer. Telling it once would need every request of a middleware
// with more than one Handler to carry a context of its own (an
// allocation of about 350 bytes) for the layers to find each other.
//
// Without a Feedback a request pays one atomic load for it; with one,
// a refused request pays nothing more when it has no Refused method.
func (m *Middleware) SetFeedback(f Feedback) {
	if nilness.Is(f) {
		m.fb.Store(nil)
		return
	}
	fb := &feedback{f: f}
	fb.refused, _ = f.(interface{ Refused() })
	m.fb.Store(fb)
}

// fedHandler is the handler a middleware passes requests to: next, timed
// for the Feedback when there is one.
type fedHandler struct {
	m    *Middleware
	next http.Handler
}

func (h *fedHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fb := h.m.fb.Load()
	if fb == nil {
		h.next.ServeHTTP(w, r)
		return
	}
	timing.Serve(w, r, h.next, h.m.clock, fb.f)
}

// foldMask returns the policies of res (a mask over its Set) that it
// checks on their first guard's state alone (nested.Ops.Folded).
func foldMask(res *policy.Result) uint64 {
	var folds uint64
	for i, m := 0, res.Mask(); m != 0; i, m = i+1, m&(m-1) {
		if nest.Folded(res, i) {
			folds |= m & -m
		}
	}
	return folds
}
