package middleware

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/errlist"
	"github.com/ratekeeper/ratekeeper/internal/nilness"
	"github.com/ratekeeper/ratekeeper/policy"
)

// A LogObserver is an [Observer] that writes to a [slog.Logger]: store
// failures (Error; not a store call that ended because its client went
// away, an abandoned request), failure-state changes (Warn, and Info on recovery),
// effective-limit changes (Info), and rejected requests (Info for denials,
// Warn for missing keys; in shadow mode the requests that would have been,
// marked "shadow") at a sampled rate, so that a flood of bad requests
// cannot flood the log: at most N denial records per second for each
// policy (N being [LogRate]'s; and N for store errors, N for requests
// without a key), the records dropped in one second counted in the
// "suppressed" attribute of the next record logged on that budget. The
// failure-state changes of a flapping store (failing now and then, never
// long enough to open the breaker) are sampled too, at most N records a
// second, the changes left out counted in "suppressed"; when they ended in
// a State other than the one last logged, the first request after that
// second logs the change to it, so that the last record tells the State.
//
// A request a leaky_queue held for its turn ([Event.Held]) is logged as
// "ratekeeper: request held", at Debug when it was served after the hold
// (outcome "allowed"), one level below denials as nginx's limit_req logs
// its delays, and at Info when the hold was cut short and the request not
// served (outcome "abandoned": its client went away, or its deadline ran
// out): "held" is the time it was held (on the middleware's clock, up to
// the end or the cut), "delay" the Delay the queue gave it, "policy" the
// policy whose queue held it (of several, the one with the longest
// Delay), with its pk, key, route and path as in a denial record. A
// request a leaky_queue refused at once, not held, because its context's
// deadline comes at or before its turn (answered 503; outcome Abandoned) is
// logged as "ratekeeper: deadline before turn", at Info as a hold cut
// short: "delay" is the Delay the queue would have held it for and
// "deadline_in" the time left until its deadline when the middleware
// judged it (read on the system clock, as context deadlines run; 0 for
// one already passed), with the policy, pk, key, route and path as in a
// hold record. The records of holds cut short and of refusals for a
// deadline are a policy's queue records, sampled per policy as denials
// are, N a second, on a budget of their own; the Debug records of holds
// served, on another, so that neither kind crowds out another: a
// leaky_queue policy writes at most 2N records a second at Info (N
// denials, N queue records) and 3N at Debug, any other policy N. No other
// record has "held", "delay" or "deadline_in", and a request neither held
// nor refused for its deadline (none delayed it, shadow mode) writes none
// of them.
//
// A denial record names the policy (the first that denied the request)
// and gives the client's key as "pk", a keyed hash (see
// [LogPartitionKey]), never the key itself; that of a request whose cost is
// out of some policies' capacity, which no policy decided, has no pk but
// the *policy.CostError's text as "error", naming each of them with the
// cost and its capacity (its "policy" is the first). A key may carry a
// credential (a policy keyed by a key function of the application's own
// that reads an API key or an Authorization header as sent: keyfunc.Header
// and keyfunc.Cookie key a credential by its digest) or personal data (a
// client address, a user ID),
// which a log must not keep unless its operator chooses so ([LogRawKeys]).
// For the same reason a denial or no-key record says where the request
// went by its route pattern ("route", as the middleware finds it: see
// [Event.Route]), not by its URL path, which may carry a token or personal
// data too (/reset/<token>), unless [LogRawPaths].
//
// A store-failure record ("ratekeeper: store failed") names the policies
// its request was to be decided under, as "policies" (a list of names), so
// that the records of nested middlewares sharing a store and a log tell
// which one failed. A LogObserver's failure-state record names none (the
// State is the middleware's, and one LogObserver may serve several; a
// middleware without an observer names its policies in its own: see
// [WithLogger]). Where several middlewares log to one place, give each a
// logger of its own that says which it is, and every record of that
// middleware carries it: WithLogger(slog.Default().With("limiter", "login")).
//
// Build one with [NewLogObserver] or use [WithLogger]. It is safe for
// concurrent use.
type LogObserver struct {
	log      *slog.Logger
	clock    algorithms.Clock
	perSec   int64
	pkSecret []byte   // the pk's secret
	drawn    bool     // pkSecret was drawn at random (no LogPartitionKey)
	rawKeys  bool     // LogRawKeys
	rawPaths bool     // LogRawPaths
	samplers sync.Map // string -> *sampler
	holds    sync.Map // string -> *sampler, of the Info queue records per policy
	served   sync.Map // string -> *sampler, of the Debug records of holds served
	limits   sync.Map // string -> int64, the last limit seen per policy
	states   stateLog // the records of failure-state changes
}

// A LogOption configures a LogObserver.
type LogOption func(*LogObserver) error

// LogRate sets N, the most records per second of each kind for each
// policy; the default is 10. The kinds are a policy's denials; its queue
// records (leaky_queue: its holds cut short, and its refusals of requests
// whose deadline comes at or before their turn); and the Debug records of its
// holds served. Each has a budget of its own, so that routine holds never
// crowd out those cut short, nor queue records denials: a leaky_queue
// policy writes at most 2N records a second at Info and 3N at Debug, any
// other policy N. N is also the most records per second of store errors,
// of requests without a key, and of failure-state changes.
func LogRate(perSecond int) LogOption {
	return func(l *LogObserver) error {
		if perSecond < 1 {
			return errors.New("middleware: LogRate: perSecond must be at least 1")
		}
		l.perSec = int64(perSecond)
		return nil
	}
}

// LogClock sets the clock that delimits the seconds of LogRate; the default
// is [algorithms.SystemClock].
func LogClock(c algorithms.Clock) LogOption {
	return func(l *LogObserver) error {
		if nilness.Is(c) {
			return errors.New("middleware: LogClock: clock is nil")
		}
		l.clock = c
		return nil
	}
}

// LogPartitionKey sets the secret the "pk" of a denial record is hashed
// under: 9 bytes of SHA-256 over secret and the key as the store sees it
// ("policy:key"), written as a Structured Field byte sequence
// (":base64:"). With the secret given to [WithPartitionKey], the pk of a
// record is the pk parameter of the policy's member in the response's
// RateLimit field, so that the pk a client reports finds its records. The
// secret must be at least 16 bytes. The default is a secret drawn at
// random by [NewLogObserver] (for [WithLogger], the middleware's
// WithPartitionKey secret when it has one): the records of one client then
// share a pk for the observer's life, and no one can compute it from a key
// (or a key from it, by trying every address of a small key space).
func LogPartitionKey(secret []byte) LogOption {
	return func(l *LogObserver) error {
		if len(secret) < 16 {
			return errors.New("middleware: LogPartitionKey: secret must be at least 16 bytes")
		}
		l.pkSecret, l.drawn = append([]byte(nil), secret...), false
		return nil
	}
}

// LogRawKeys adds the key itself, as the store sees it ("policy:key"), to
// denial and queue records (holds, refusals for a deadline) as the "key"
// attribute, beside the pk, and logs
// in full the text of a store error about one key's value
// ([algorithms.ErrKeyState]), which names the key (otherwise the record
// gives only the kind of error; the error handler gets it all). Off by
// default; turn it on only where keys carry no credential nor personal
// data, or where the log may keep them.
func LogRawKeys() LogOption {
	return func(l *LogObserver) error {
		l.rawKeys = true
		return nil
	}
}

// LogRawPaths adds the request's URL path to denial, queue (holds,
// refusals for a deadline) and no-key records as the "path" attribute. Off by default: a path may carry a
// credential or personal data (/reset/<token>, /users/<email>); the
// records give the route pattern instead when the middleware knows it
// (see [Event.Route]). Turn it on only where paths carry neither, or where
// the log may keep them.
func LogRawPaths() LogOption {
	return func(l *LogObserver) error {
		l.rawPaths = true
		return nil
	}
}

// NewLogObserver returns a LogObserver writing to logger; a nil logger
// means [slog.Default]. (A middleware built without any observer logs
// only the changes of its failure [State], on [slog.Default], at most one
// record a second (see [WithLogger]), and its setup warnings; with
// observers but no LogObserver it logs only its setup warnings, and those
// only without an error handler. Its failures reach [WithErrorHandler] and
// [Middleware.Stats] in every case.) Every refused option is reported, one
// per line, in the order given (a nil one by its index).
func NewLogObserver(logger *slog.Logger, opts ...LogOption) (*LogObserver, error) {
	if logger == nil {
		logger = slog.Default()
	}
	l := &LogObserver{log: logger, clock: algorithms.SystemClock, perSec: 10, pkSecret: make([]byte, 32), drawn: true}
	_, _ = rand.Read(l.pkSecret) // never fails (it crashes the program instead)
	var errs []error
	for i, opt := range opts {
		if opt == nil {
			errs = append(errs, fmt.Errorf("middleware: NewLogObserver: Options hold a nil LogOption at index %d", i))
		} else if err := opt(l); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errlist.Join(errs)
	}
	return l, nil
}

// WithLogger logs the middleware's failures, state and limit changes,
// and sampled rejections, leaky_queue holds and refusals of requests
// whose deadline comes at or before their turn, to logger (nil:
// [slog.Default]) through a [LogObserver] with default settings, whose
// pks are hashed under the middleware's [WithPartitionKey] secret when it
// has one (given before or after this option), so that they match the
// pks of its headers, and whose seconds (LogRate) are counted on the
// middleware's clock ([WithClock], before or after this option). A
// middleware without any observer (neither this option nor
// [WithObserver]) logs only the changes of its failure [State], on
// [slog.Default] as it is at each change, at most one record a second:
// "ratekeeper: failure state changed" with from and to, a warning when the
// store starts failing and information when it answers again, policies,
// the names of the middleware's policies (telling nested middlewares
// apart), and changes_not_logged, the changes left out since the record
// before, when there were any. A middleware that logs nowhere and has no error handler
// (WithErrorHandler) logs its once-only setup warnings on [slog.Default]
// all the same, at Warn: "ratekeeper: setup warning" ([ErrUnrouted],
// [ErrForwardingIgnored], [ErrCountedTwice], [ErrSameNameNested]).
//
// Each WithLogger adds a LogObserver: one logger given twice to one
// middleware (the same *slog.Logger; nil and [slog.Default] are one), or
// given to WithLogger and to a LogObserver given to [WithObserver], in
// either order, is an error, since every record would be written twice.
// Two loggers are two, even on one handler (l and l.With(...)), and each
// of their LogObservers takes the middleware's partition key and clock;
// the setup warnings (once each, without an error handler) are logged on
// the logger given last only.
func WithLogger(logger *slog.Logger) Option {
	return func(m *Middleware) error {
		l, err := NewLogObserver(logger)
		if err != nil {
			return err
		}
		for _, p := range m.given {
			if lo, ok := p.o.(*LogObserver); ok && lo.log == l.log {
				if slices.Contains(m.loggers, lo) {
					return errors.New("middleware: WithLogger: the logger is given twice: it would write each record twice; give WithLogger once")
				}
				return errLoggerBeside(lo, "")
			}
		}
		m.loggers = append(m.loggers, l)
		return WithObserver(l)(m)
	}
}

// errLoggerBeside is the error of a LogObserver given to WithObserver
// that writes to a logger given to WithLogger; at, after the options'
// names, says which observer it is when WithObserver was given several
// ("observer at index 2: "), or is empty.
func errLoggerBeside(lo *LogObserver, at string) error {
	return fmt.Errorf("middleware: WithLogger and WithObserver: %sthe logger given to WithLogger is the one a %T given to WithObserver writes to: it would write each record twice; give WithLogger alone, or the LogObserver alone (with its LogOptions)", at, lo)
}

// sampler counts one policy's records in the current second. The records
// of store errors and of requests without a key have samplers of their own,
// under names no policy can have (" store", " key").
type sampler struct {
	sec        atomic.Int64 // Unix second counted
	n          atomic.Int64 // records in sec
	suppressed atomic.Int64 // records dropped since the last one logged
}

// admit reports whether a record for name may be logged now, and how many
// were suppressed before it.
func (l *LogObserver) admit(name string) (ok bool, suppressed int64) {
	return l.admitIn(&l.samplers, name)
}

// admitIn is admit with the samplers of samplers (l.samplers or l.holds).
func (l *LogObserver) admitIn(samplers *sync.Map, name string) (ok bool, suppressed int64) {
	v, found := samplers.Load(name)
	if !found {
		v, _ = samplers.LoadOrStore(name, new(sampler))
	}
	s := v.(*sampler)
	sec := l.clock.Now().Unix()
	// A new second starts the count again; a read of the second before
	// the one in progress (a request that read the clock as the second
	// turned, logged after one that began the new second) is counted in
	// the one in progress, which it would otherwise start again from 0,
	// and the requests after it once more. A clock set back further (the
	// wall clock corrected) starts a second of its own.
	if old := s.sec.Load(); (sec > old || sec < old-1) && s.sec.CompareAndSwap(old, sec) {
		s.n.Store(0)
	}
	if s.n.Add(1) > l.perSec {
		s.suppressed.Add(1)
		return false, 0
	}
	return true, s.suppressed.Swap(0)
}

// policyNames returns the names of the policies res evaluated, in Set
// order: a store failure's record names them, so that the records of
// nested middlewares sharing a store (and a log) tell which one failed.
func policyNames(res *Result) []string {
	names := make([]string, res.Len())
	for i := range names {
		names[i] = res.Policy(i).Name()
	}
	return names
}

// setNames returns the names of the policies of s (nil: none), in order.
func setNames(s *policy.Set) []string {
	if s == nil {
		return nil
	}
	names := make([]string, s.Len())
	for i := range names {
		names[i] = s.Policy(i).Name()
	}
	return names
}

// ObserveRequest logs store failures, rejected requests, held ones and
// those refused for a deadline before their turn, sampled.
func (l *LogObserver) ObserveRequest(e Event) {
	if s := &l.states; s.pending.Load() && s.full.Load() != l.clock.Now().Unix() {
		// A State to log, and a second with room for it: a request
		// during a flood in the second whose budget ran out takes no lock.
		l.flushState()
	}
	res := e.Result
	if res.err != nil && e.Outcome != KeyRejected && !prepareError(res.err) && !clientGone(e) {
		if ok, sup := l.admit(" store"); ok {
			errAttr := slog.Any("error", res.err)
			if !l.rawKeys && errors.Is(res.err, algorithms.ErrKeyState) {
				// Its text names the store's key, which holds the client's.
				errAttr = slog.String("error", algorithms.ErrKeyState.Error())
			}
			l.log.LogAttrs(context.Background(), slog.LevelError, "ratekeeper: store failed",
				slog.String("outcome", e.Outcome.String()), slog.Bool("fallback", res.fallback),
				errAttr, slog.Int64("suppressed", sup), slog.Any("policies", policyNames(res)))
		}
	}
	if held, ok := e.Held(); ok {
		l.logHold(e, held)
	} else if e.early {
		l.logEarly(e)
	}
	switch e.Outcome {
	case Denied, ShadowDenied:
		var ke *policy.KeyError
		if e.Outcome == ShadowDenied && !res.Taken() && errors.As(res.err, &ke) {
			// Shadow mode let through a request that had no key: it
			// would have been rejected for that, not denied by a limit.
			l.noKey(e, res, true)
			return
		}
		if !res.Taken() && res.err != nil && !prepareError(res.err) {
			// Shadow mode let through a request the store could not
			// decide under FailClosed: no policy denied it, and the
			// store failure is logged above. (One the fallback store
			// denied was taken.)
			return
		}
		name, key := "", ""
		for i := 0; i < res.Len(); i++ {
			if e.DeniedBy(i) {
				name, key = res.Policy(i).Name(), res.Key(i)
				break
			}
		}
		var ce *policy.CostError
		if name == "" {
			var ke *policy.KeyError
			switch {
			case errors.As(res.err, &ce):
				name = ce.Policy.Name()
			case errors.As(res.err, &ke):
				name = ke.Policy.Name()
			}
		}
		if ok, sup := l.admit(name); ok {
			var buf [9]slog.Attr
			attrs := append(buf[:0], slog.String("policy", name))
			if ce != nil {
				// Refused for its cost: the error names every policy
				// the cost is out of, with its cost and capacity (no
				// key: none was needed).
				attrs = append(attrs, slog.String("error", ce.Error()))
			}
			if key != "" {
				attrs = append(attrs, slog.String("pk", string(appendPK(nil, l.pkSecret, key)[len(";pk="):])))
				if l.rawKeys {
					// The key points into the Result, which a middleware
					// without context recycles after the request: a handler
					// may keep the record (an asynchronous one does), so it
					// gets a copy.
					attrs = append(attrs, slog.String("key", strings.Clone(key)))
				}
			}
			attrs = append(attrs, slog.Bool("shadow", e.Outcome == ShadowDenied), slog.String("method", e.Request.Method))
			attrs = l.appendWhere(attrs, e)
			attrs = append(attrs, slog.String("retry_after", res.RetryAfter().String()), slog.Int64("suppressed", sup))
			l.log.LogAttrs(context.Background(), slog.LevelInfo, "ratekeeper: request denied", attrs...)
		}
	case KeyRejected:
		l.noKey(e, res, false)
	}
}

// logHold logs the hold of e, a request held for its turn in a
// leaky_queue for held (see LogObserver).
func (l *LogObserver) logHold(e Event, held time.Duration) {
	level := slog.LevelInfo
	if e.Outcome == Allowed {
		level = slog.LevelDebug
	}
	var buf [10]slog.Attr
	attrs, delay, sup, ok := l.queueRecord(buf[:0], e, level)
	if !ok {
		return
	}
	attrs = append(attrs, slog.String("outcome", e.Outcome.String()), slog.String("held", held.String()),
		slog.String("delay", delay.String()), slog.Int64("suppressed", sup))
	l.log.LogAttrs(context.Background(), level, "ratekeeper: request held", attrs...)
}

// logEarly logs e, a request a leaky_queue refused at once because its
// deadline comes at or before its turn (see LogObserver).
func (l *LogObserver) logEarly(e Event) {
	var buf [10]slog.Attr
	attrs, delay, sup, ok := l.queueRecord(buf[:0], e, slog.LevelInfo)
	if !ok {
		return
	}
	attrs = append(attrs, slog.String("delay", delay.String()), slog.String("deadline_in", e.left.String()),
		slog.Int64("suppressed", sup))
	l.log.LogAttrs(context.Background(), slog.LevelInfo, "ratekeeper: deadline before turn", attrs...)
}

// queueRecord starts the record at level of e, a request a leaky_queue
// gave a Delay (held, or refused for its deadline): it appends to attrs
// the policy whose queue gave the longest Delay, its pk (and key), the
// method and where the request went, and returns them with that Delay and
// the records suppressed before this one on the policy's budget of queue
// records (the Debug records of holds served have their own). ok is
// false when no record is to be written: the level is not
// enabled (the record is then not counted against the budget either), the
// budget is spent, or no policy gave a Delay.
func (l *LogObserver) queueRecord(attrs []slog.Attr, e Event, level slog.Level) (_ []slog.Attr, delay time.Duration, sup int64, ok bool) {
	res := e.Result
	if res == nil || !res.Taken() {
		return attrs, 0, 0, false
	}
	if !l.log.Enabled(context.Background(), level) {
		// Neither written nor counted against the budget of the
		// records that are.
		return attrs, 0, 0, false
	}
	at := -1 // the policy whose queue gave the longest Delay
	for i := 0; i < res.Len(); i++ {
		if d := res.Decision(i).Delay; d > delay {
			at, delay = i, d
		}
	}
	if at < 0 {
		return attrs, 0, 0, false // never: the middleware holds (or refuses) a request for a Delay
	}
	name, key := res.Policy(at).Name(), res.Key(at)
	budget := &l.holds
	if level < slog.LevelInfo {
		budget = &l.served // routine: never crowds out a hold cut short
	}
	if ok, sup = l.admitIn(budget, name); !ok {
		return attrs, 0, 0, false
	}
	attrs = append(attrs, slog.String("policy", name))
	if key != "" {
		attrs = append(attrs, slog.String("pk", string(appendPK(nil, l.pkSecret, key)[len(";pk="):])))
		if l.rawKeys {
			attrs = append(attrs, slog.String("key", strings.Clone(key))) // see ObserveRequest
		}
	}
	attrs = append(attrs, slog.String("method", e.Request.Method))
	return l.appendWhere(attrs, e), delay, sup, true
}

// setupWarning logs one of the middleware's once-only warnings about its
// setup (ErrUnrouted, ErrForwardingIgnored, ErrCountedTwice), which the
// middleware also gives its error handler.
func (l *LogObserver) setupWarning(err error) { logSetupWarning(l.log, err) }

// logSetupWarning logs err, a setup warning, on logger at Warn.
func logSetupWarning(logger *slog.Logger, err error) {
	logger.LogAttrs(context.Background(), slog.LevelWarn, "ratekeeper: setup warning", slog.String("error", err.Error()))
}

// noKey logs the request of e, which had no key for a policy that rejects
// such requests: rejected, or let through by shadow mode.
func (l *LogObserver) noKey(e Event, res *Result, shadow bool) {
	if ok, sup := l.admit(" key"); ok {
		var buf [6]slog.Attr
		attrs := l.appendWhere(append(buf[:0], slog.String("method", e.Request.Method)), e)
		if shadow {
			attrs = append(attrs, slog.Bool("shadow", true))
		}
		attrs = append(attrs, slog.Any("error", res.err), slog.Int64("suppressed", sup))
		l.log.LogAttrs(context.Background(), slog.LevelWarn, "ratekeeper: no key", attrs...)
	}
}

// appendWhere appends the attributes that say where the request of e went:
// its route pattern as "route" when known ([Event.Route]), and its URL
// path as "path" with LogRawPaths only.
func (l *LogObserver) appendWhere(attrs []slog.Attr, e Event) []slog.Attr {
	if route := e.Route(); route != "" {
		attrs = append(attrs, slog.String("route", route))
	}
	if l.rawPaths {
		attrs = append(attrs, slog.String("path", e.Request.URL.Path))
	}
	return attrs
}

// stateLog samples the records of failure-state changes: a store failing
// now and then (not often enough in a row to open the breaker) changes the
// State at every other request, each change a record.
type stateLog struct {
	mu         sync.Mutex
	sec        int64        // Unix second counted
	n          int64        // records in sec
	suppressed int64        // changes not logged since the last record
	logged     State        // the State the last record went to
	told       State        // the State the last change told went to
	pending    atomic.Bool  // a change was left out and told != logged
	full       atomic.Int64 // the last second whose budget ran out
}

// take reports whether a record may be written in second sec, at most
// perSec a second, and counts it. The caller holds s.mu.
func (s *stateLog) take(sec, perSec int64) bool {
	if sec != s.sec {
		s.sec, s.n = sec, 0
	}
	if s.n >= perSec {
		s.full.Store(sec)
		return false
	}
	s.n++
	return true
}

// write logs the change from → to with the changes left out before it.
// The caller holds s.mu.
func (s *stateLog) write(log *slog.Logger, from, to State) {
	var extra []slog.Attr
	if s.suppressed > 0 {
		extra = append(extra, slog.Int64("suppressed", s.suppressed))
	}
	logStateChange(log, from, to, extra...)
	s.logged, s.suppressed = to, 0
	s.pending.Store(false)
}

// ObserveState logs a change of failure state, at most LogRate records a
// second: the changes left out are counted in the "suppressed" attribute
// of the next record, and when the State they ended in is not the one
// last logged, the first request after the second's budget logs the
// change from that one to it, so that the last record tells the State.
func (l *LogObserver) ObserveState(from, to State) {
	s := &l.states
	s.mu.Lock()
	defer s.mu.Unlock()
	s.told = to
	if !s.take(l.clock.Now().Unix(), l.perSec) {
		s.suppressed++
		s.pending.Store(s.told != s.logged)
		return
	}
	s.write(l.log, from, to)
}

// flushState logs the State the failure-state changes left out ended in,
// from the State last logged, when the budget of the second allows: so
// the log's last record of the State is right once a flapping store has
// settled.
func (l *LogObserver) flushState() {
	s := &l.states
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.pending.Load() || !s.take(l.clock.Now().Unix(), l.perSec) {
		return
	}
	s.write(l.log, s.logged, s.told)
}

// logStateChange writes the record of a change of failure state: a
// warning when the store starts failing, information when it answers
// again, with extra attributes after from and to.
func logStateChange(log *slog.Logger, from, to State, extra ...slog.Attr) {
	level := slog.LevelWarn
	if to == StateHealthy {
		level = slog.LevelInfo
	}
	attrs := append([]slog.Attr{slog.String("from", from.String()), slog.String("to", to.String())}, extra...)
	log.LogAttrs(context.Background(), level, "ratekeeper: failure state changed", attrs...)
}

// ObserveLimit logs an effective limit that differs from the configured
// one, and any later change (such as the return to the configured one).
func (l *LogObserver) ObserveLimit(name string, limit, configured int64) {
	prev, had := l.limits.Swap(name, limit)
	if had && prev.(int64) == limit || !had && limit == configured {
		return
	}
	l.log.LogAttrs(context.Background(), slog.LevelInfo, "ratekeeper: effective limit",
		slog.String("policy", name), slog.Int64("limit", limit), slog.Int64("configured", configured))
}

// ObservePolicyRemoved forgets the sampling state and last limit of a
// policy that left the rule set.
func (l *LogObserver) ObservePolicyRemoved(name string) {
	l.limits.Delete(name)
	l.samplers.Delete(name)
	l.holds.Delete(name)
	l.served.Delete(name)
}

var _ RemovalObserver = (*LogObserver)(nil)

// clientGone reports whether e is a request abandoned because its client
// went away (its context cancelled), or let through by shadow mode for
// that, whose store call therefore counts as no failure: the middleware
// counts no store error for it and leaves its State as it was (see take),
// whatever error the cancelled call ended with. Errors that count even so
// (an answer of the backend, a check or store refused, the breaker) are
// not such.
func clientGone(e Event) bool {
	err := e.Result.err
	return (e.Outcome == Abandoned || e.Outcome == ShadowDenied && !e.Result.Taken()) && e.Request.Context().Err() == context.Canceled &&
		!errors.Is(err, errBadDelay) && !errors.Is(err, algorithms.ErrKeyState) && !errors.Is(err, algorithms.ErrTryAgain) &&
		!errors.Is(err, algorithms.ErrInvalidSpec) && !errors.Is(err, algorithms.ErrInvalidCost) &&
		!errors.Is(err, algorithms.ErrClosed) && !errors.Is(err, ErrBreakerOpen) && !errors.Is(err, algorithms.ErrCircuitOpen)
}

// prepareError reports whether err is a request's fault (no key, a cost out
// of range), not the store's.
func prepareError(err error) bool {
	var ke *policy.KeyError
	var ce *policy.CostError
	return errors.As(err, &ke) || errors.As(err, &ce)
}
