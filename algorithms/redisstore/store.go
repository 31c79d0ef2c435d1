package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/errlist"
	"github.com/ratekeeper/ratekeeper/internal/nilness"
	"github.com/redis/go-redis/v9"
)

// DefaultPrefix is the key prefix used when [WithPrefix] is not given.
const DefaultPrefix = "rk"

// DefaultClockTTL is the shortest expiry given to a key when the store runs
// on an injected clock: see [WithClock].
const DefaultClockTTL = time.Hour

// DefaultTimeout bounds every call of a store (a Take, Peek, Reset, Refund
// or GiveBack, redials and retries included) when [WithTimeout] does not
// set another bound: see WithTimeout.
const DefaultTimeout = 2 * time.Second

// ErrCircuitOpen is returned, at once and without contacting Redis, while the
// circuit breaker of [WithCircuitBreaker] is open (on a Cluster, that of
// the call's master). It matches [algorithms.ErrCircuitOpen] (errors.Is),
// which the middleware's own breaker counts neither as a failure nor as
// an answer.
var ErrCircuitOpen error = circuitOpenError{}

// circuitOpenError is ErrCircuitOpen's type, and that of the refusal of
// a Cluster master's breaker, which names its address (addr): both match
// algorithms.ErrCircuitOpen, a master's ErrCircuitOpen too.
type circuitOpenError struct{ addr string }

func (e circuitOpenError) Error() string {
	if e.addr == "" {
		return "redisstore: circuit open: Redis is failing"
	}
	return "redisstore: circuit open: the Redis Cluster master at " + e.addr + " is failing"
}

// Is reports whether target is algorithms.ErrCircuitOpen or, for a
// master's refusal, ErrCircuitOpen.
func (e circuitOpenError) Is(target error) bool {
	return target == algorithms.ErrCircuitOpen || e.addr != "" && target == ErrCircuitOpen
}

// Store is the Redis implementation of [algorithms.Store] and
// [algorithms.IntoStore]: the seven algorithms as one Lua script, deciding
// every check of a Take atomically in one round trip. See the package
// documentation for the model, the keys, the time source and the cluster
// behaviour. A Store is safe for concurrent use; its zero value is not
// usable: call [New].
type Store struct {
	client  redis.UniversalClient
	cluster *redis.ClusterClient // nil unless client is a cluster client
	prefix  string
	clock   algorithms.Clock // nil: the server's TIME
	minTTL  time.Duration
	// minTTLSet is set by WithMinTTL, whose value then stands with
	// WithClock too, whichever option comes first.
	minTTLSet bool
	timeout   time.Duration // DefaultTimeout unless WithTimeout; 0: only the caller's context bounds a call
	// dials is the client's dial outcome (nil for a client other than a
	// *redis.Client or *redis.ClusterClient), named in the store's own
	// deadline errors.
	dials *dialWatch
	// resend bounds how long the client may send a call again (a
	// cluster client's: see resendBoundOf), which a cross-slot
	// reservation's marker outlives.
	resend resendBound
	// onReload, when set (by tests), is called each time reloadSlots
	// has the cluster client reload its slot map.
	onReload func()
	breaker  *breaker // WithCircuitBreaker's on a client other than a cluster client
	// nodes is WithCircuitBreaker's on a cluster client: one breaker
	// per master node.
	nodes  *nodeBreakers
	deny   *denyCache
	specs  specCache
	closed atomic.Bool
	// noFunctions is set once the server has shown it cannot run the
	// library (no FUNCTION/FCALL, or not allowed): then the script runs.
	noFunctions atomic.Bool
	// readPeeks is set once a Peek's keys were refused to a read-write
	// call and a read-only one ran: Peeks are then sent read-only (see call).
	readPeeks atomic.Bool
	// unreached is when (since procStart) a call last found the function
	// missing just after the library was loaded: redirected to a node the
	// load does not reach (see call). For unreachedFor after that, a call
	// that finds the function missing runs as the script at once, without
	// loading the library on every master again. Zero: never.
	unreached atomic.Int64
	// loading is the load of the library under way, if any, which the
	// calls that find the function missing meanwhile wait for; loadMu
	// guards it. loads counts the loads that succeeded: a call reads it
	// before its FCALL (see loadShared).
	loadMu  sync.Mutex
	loading *loadFlight
	loads   atomic.Uint64
	// refusals counts down the calls left to run as the script, without
	// loading the library, after a server refused to load it as it
	// refuses any write (OOM, READONLY: see call). Zero or less: none.
	refusals atomic.Int64
	// guard is set when the client does not bound its I/O by the context
	// (go-redis ContextTimeoutEnabled off): then a call that may be
	// cancelled runs in a goroutine the caller stops waiting for at the
	// deadline; inflight counts those goroutines for Close.
	guard    bool
	inflight sync.WaitGroup
	// closing orders Close against the start of those goroutines: one
	// starts (inflight.Add) under its read lock only while the store is
	// open, and Close sets closed under its write lock before it waits.
	closing sync.RWMutex
}

// An Option configures a Store.
type Option func(*Store) error

// WithPrefix sets the prefix of every key (default "rk"). It must be
// non-empty and may not contain '{', '}' or whitespace (any Unicode space:
// unicode.IsSpace), which would change the hash tag or the key's meaning.
func WithPrefix(prefix string) Option {
	return func(s *Store) error {
		if prefix == "" {
			return errors.New("redisstore: WithPrefix: Prefix must not be empty")
		}
		if strings.ContainsAny(prefix, "{}") || strings.ContainsFunc(prefix, unicode.IsSpace) {
			return fmt.Errorf("redisstore: WithPrefix: Prefix %q must not contain braces or whitespace", prefix)
		}
		s.prefix = prefix
		return nil
	}
}

// WithClock makes the store decide at the instants c returns, passed to the
// script, instead of the Redis server's clock (tests, replays of recorded
// traffic). Every application instance must then agree on the time. Since
// keys still expire in Redis's real time, which need not follow c, each key
// lives at least [DefaultClockTTL] (see [WithMinTTL]).
func WithClock(c algorithms.Clock) Option {
	return func(s *Store) error {
		if nilness.Is(c) {
			return errors.New("redisstore: WithClock: Clock is nil")
		}
		s.clock = c
		return nil
	}
}

// WithMinTTL sets the shortest expiry given to a key. By default a key
// expires as soon as its state stops mattering (its ResetAfter, rounded up
// to the millisecond, plus 1 ms) on the server's clock, and lives at least
// [DefaultClockTTL] with [WithClock]; d, zero included, replaces that
// default whether it comes before or after WithClock. A longer expiry never
// changes a decision; it only keeps idle keys longer.
func WithMinTTL(d time.Duration) Option {
	return func(s *Store) error {
		if d < 0 {
			return fmt.Errorf("redisstore: WithMinTTL: MinTTL must not be negative, got %s", d)
		}
		s.minTTL, s.minTTLSet = d, true
		return nil
	}
}

// WithTimeout bounds every call of the store (a Take, Peek, Reset, Refund
// or GiveBack) by d, on top of its context's deadline, in place of
// [DefaultTimeout] (2 s); d 0 sets no bound of the store's own, leaving
// only the caller's context (and the client's options) to end a call.
// The middleware passes each request's context, which usually has no
// deadline, and go-redis alone, with its default options, takes seconds
// to give up on a paused Redis (about 10 s with go-redis v9.23: it
// waits out its read timeout and retries) and on a dead one (about 1.7 s
// with connections refused, less than the default: it fails with the
// refused dial's error then); with a timeout, such a Redis costs each
// request at most d, and the error (wrapping context.DeadlineExceeded)
// lets the middleware apply its failure mode.
//
// A timeout must never cut a healthy Redis short: a busy Redis that
// times out fails requests open (or closed), and opens the middleware's
// breaker, when it is busiest. The default leaves room above the slowest
// replies measured: under -race on 2 CPUs at a load of 12, this package's
// tests saw Takes of up to 1.1 s (TestClusterConcurrentCrossSlotTakes: 32
// concurrent cross-slot Takes on one key of a Cluster, the first ones
// each loading the library, as they did before calls that find it
// missing together shared one load) and 0.9 s in another run;
// TestDefaultTimeoutSparesABusyRedis (32 goroutines, stores with no
// option, a fresh server and a Cluster) saw 0.5 s and 0.6 s. Set a
// shorter d, with the client's short DialTimeout, ReadTimeout and
// WriteTimeout, when Redis is near and not starved of CPU
// (examples/redis: 250 ms), a longer one when its replies can take
// longer (a slow link, long sliding_log keys).
//
// When the client could not reach Redis (its latest dial failed, less than
// 10 s before, and none succeeded since: go-redis redials in the
// background while the deadline passes), the error names and wraps that
// dial's error too, so that a refused connection (Redis down: errors.Is
// syscall.ECONNREFUSED) reads apart from no reply (Redis slow). As with
// any deadline, a call that timed out may still have been run by Redis,
// or run later: on a client without ContextTimeoutEnabled, a call
// abandoned at the deadline stays on its connection, within the client's
// ReadTimeout, and a Redis that resumes in time runs it (a GiveBack or
// Refund that failed so gives back all the same;
// TestRSReview2EveryCallHonoursTheTimeout).
// A cross-slot Take on a Cluster that must undo a reservation gives the
// undo up to d more (a second under WithTimeout(0); see the package
// documentation, "Cluster"). d must not be negative.
func WithTimeout(d time.Duration) Option {
	return func(s *Store) error {
		if d < 0 {
			return fmt.Errorf("redisstore: WithTimeout: Timeout must not be negative, got %s", d)
		}
		s.timeout = d
		return nil
	}
}

// New returns a Store keeping its state in Redis through client: a
// *redis.Client (standalone or Sentinel failover client) or a
// *redis.ClusterClient; a *redis.Ring is refused (it shards by a call's
// first key, so one key's state could land on several shards). It does not
// contact Redis: the first call loads the
// code as a function library (FUNCTION LOAD, then FCALL), which the server
// keeps; without functions, as a script (EVALSHA, then EVAL on NOSCRIPT).
//
// New adds one hook to the client (redis.Hook, with AddHook; once per
// client, however many stores share it, and for the client's lifetime): it
// only watches dials, keeping the latest one's error, which a call ended
// by the store's own deadline names (see [WithTimeout]); it passes
// commands and pipelines on untouched (go-redis builds its chain without
// it; one effect: the client's AutoPipeliner, if the application uses
// one, arms the guard it keeps for clients with hooks, reading a
// goroutine id per batch). On a *redis.ClusterClient, whose node clients
// dial, the hook goes on each node client it makes from then on
// (OnNewNode; the node clients of a cluster client already used before
// New are not watched).
func New(client redis.UniversalClient, opts ...Option) (*Store, error) {
	if nilness.Is(client) {
		return nil, errors.New("redisstore: New: client is nil")
	}
	s := &Store{client: client, prefix: DefaultPrefix, timeout: DefaultTimeout}
	switch c := client.(type) {
	case *redis.ClusterClient:
		s.cluster = c
		s.guard = !c.Options().ContextTimeoutEnabled
		s.dials = watchDials(c)
		s.resend = resendBoundOf(c.Options())
	case *redis.Client:
		s.guard = !c.Options().ContextTimeoutEnabled
		s.dials = watchDials(c)
	case *redis.Ring:
		// A Ring sends a call to its first key's shard: a client key's
		// state would live on whichever shard a Take's first check picked.
		return nil, errors.New("redisstore: New: a *redis.Ring cannot keep one limit (a call goes to its first key's shard); use a *redis.Client, a Sentinel failover client or a *redis.ClusterClient")
	default:
		s.guard = true
	}
	// Every refused option is reported, one per line.
	var errs []error
	for i, o := range opts {
		if o == nil {
			errs = append(errs, fmt.Errorf("redisstore: New: Options hold a nil Option at index %d", i))
		} else if err := o(s); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errlist.Join(errs); err != nil {
		return nil, err
	}
	if s.clock != nil && !s.minTTLSet {
		s.minTTL = DefaultClockTTL
	}
	return s, nil
}

// Close marks the store closed: later calls return [algorithms.ErrClosed].
// It waits for the calls abandoned at their context's deadline (see the
// package documentation, "Failures") to end, which the client's read
// timeout bounds (TestRSReview2AbandonedCallEndsAtReadTimeout; with no
// ReadTimeout, -1, only Redis's reply or the end of the connection ends
// one: close the client first, TestRSReview2AbandonedCallWithoutReadTimeout);
// a call under way (Take, Peek, Reset, Refund, GiveBack)
// that would start such a call once Close has begun returns ErrClosed
// instead (TestCloseRacingEveryCall; a cross-slot undo runs still, on the
// Take's goroutine). It does not close the client, which the
// caller owns. Close is idempotent and returns nil.
func (s *Store) Close() error {
	s.closing.Lock()
	s.closed.Store(true)
	s.closing.Unlock()
	s.inflight.Wait()
	return nil
}

// Take implements [algorithms.Store]: it decides all checks at one instant,
// all or nothing, in one round trip.
func (s *Store) Take(ctx context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	dst := make([]algorithms.Decision, len(checks))
	if err := s.TakeInto(ctx, dst, checks); err != nil {
		return nil, err
	}
	return dst, nil
}

// TakeInto implements [algorithms.IntoStore]: Take writing into dst, which
// must have len(checks) elements.
func (s *Store) TakeInto(ctx context.Context, dst []algorithms.Decision, checks []algorithms.Check) error {
	return s.do(ctx, opTake, dst, checks)
}

// The calls do runs, named so in their errors (as are "refund" and
// "give-back", which give runs).
const (
	opTake  = "take"
	opPeek  = "peek"
	opReset = "reset"
)

// do runs a Take (op opTake: TakeInto), a Peek (opPeek) or a Reset
// (opReset, dst nil) of checks: it validates them (a Take's and a Peek's
// by algorithms.ValidateChecks, a Reset's Specs), then calls Redis under
// the circuit breaker, within the store's timeout and the caller's
// context, deciding into dst, and keeps the deny cache: a Take is answered
// from it when it can and teaches it; a failed Take, and a Reset even
// failed, make it forget the checks' keys (the call may have run); a Peek
// neither reads nor changes it. One function for the three, so that a
// Take's single-slot path stays one call with no closure.
func (s *Store) do(ctx context.Context, op string, dst []algorithms.Decision, checks []algorithms.Check) error {
	if op != opReset && len(dst) != len(checks) {
		method := "TakeInto"
		if op == opPeek {
			method = "Peek"
		}
		return fmt.Errorf("redisstore: %s: %d decisions for %d checks", method, len(dst), len(checks))
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.closed.Load() {
		return algorithms.ErrClosed
	}
	if len(checks) == 0 {
		return nil
	}
	if op == opReset {
		for i := range checks {
			if err := checks[i].Spec.Validate(); err != nil { // a Reset ignores the Cost
				return err
			}
		}
	} else if err := algorithms.ValidateChecks(checks); err != nil {
		// Checks of one key that it could never admit together are an
		// error too, found here with no round trip.
		return err
	}
	var now time.Time
	if s.clock != nil {
		now = s.clock.Now()
	}
	// Before the call: a denial is dated no later than the instant Redis
	// decides at, so the deny cache never outlasts its RetryAfter. Only
	// they read the instants local and replied: a store with neither
	// reads no local clock (time.Now) for them.
	var local time.Time
	if s.deny != nil || s.breaker != nil || s.nodes != nil {
		local = s.localNow(now)
	}
	var marked uint64
	if op == opTake && s.deny != nil {
		if s.deny.answer(dst, checks, local) {
			return nil
		}
		marked = s.deny.mark(checks)
	}
	var tk ticket
	recorded := false // the breaker has the call's outcome (see breaker.unwound)
	b := s.breaker
	if b != nil {
		var err error
		if tk, err = b.allowCtx(local, ctx); err != nil {
			return err
		}
		defer b.unwound(tk, &recorded)
	}
	parent := ctx
	ctx, cancel := s.callContext(ctx)
	defer cancel()
	req := s.newRequest(checks, now)
	var err error
	split := s.cluster != nil && !req.oneSlot()
	// On a Cluster, the breaker of each node the call goes to: one
	// lookup of its slot's node, or, split, of each slot's.
	var p *pass
	if s.nodes != nil {
		if split {
			p, err = s.nodes.allowAll(ctx, parent, req, local, true)
			if err != nil {
				req.release()
				s.refused()
				return err
			}
			defer p.unwound(&recorded)
			err, req.pass = p.failed, p
		} else {
			var failed error
			b, failed = s.nodes.breakerFor(ctx, req.keys[0], local)
			if tk, err = b.allowCtx(local, parent); err != nil {
				req.release()
				s.refused()
				return err
			}
			defer b.unwound(tk, &recorded)
			err = failed
		}
	}
	switch {
	case err != nil: // no node for the call (see breakerFor)
	case op == opReset:
		err = s.del(ctx, req, split)
	case op == opPeek:
		err = s.peek(ctx, req, split, dst)
	case split:
		err = s.runSplit(ctx, req, dst)
	default:
		err = s.run(ctx, s.client, req, dst)
	}
	if s.synchronous(ctx) {
		req.release() // no goroutine can still hold its keys or arguments
	}
	if err != nil && !split {
		s.reloadSlots(ctx, err) // a split call reloads on each part's error (cluster.go)
	}
	err = markKeyState(s.ownDeadline(op, err, parent))
	var replied time.Time
	if s.deny != nil || b != nil || p != nil {
		replied = s.localNow(now)
	}
	if p != nil {
		p.record(err, func(e error) error { return markKeyState(s.ownDeadline(op, e, parent)) }, replied)
		recorded = true
	} else if b != nil {
		b.record(err, replied, tk)
		recorded = true
	}
	if s.deny == nil || op == opPeek {
		return err
	}
	if err != nil || op == opReset {
		// A Take's script may have run, and admitted (a reply lost, a
		// deadline met after the call was sent): as after an admitted
		// Take, the key's cached waits may be too short. A reset key is
		// admitted at once.
		s.deny.forget(checks)
		return err
	}
	s.deny.learn(dst, checks, local, replied, marked)
	return nil
}

// reloadSlots has a cluster client reload its slot map once when any of
// errs is a failure without a reply of Redis (a refused dial, a timeout, a
// closed connection): the node the call went to may be a master that is
// gone, whose replica took over. go-redis reloads the map on a MOVED, ASK
// or READONLY reply, which a dead node never sends, and otherwise only
// every ClusterStateReloadInterval (60 s by default): until then every
// call of its slots went to the dead address (TestClusterFailover: about
// 60 s of "connection refused" after the failover). A call split by slot
// or by key passes every part's error: it returns one, which may be a
// reply (a key's value the store did not write, a refused write) while
// another part got none (TestClusterSplitFailureWithoutReplyReloadsSlots).
// ctx is the context the calls of errs ran under: a context error while
// ctx's caller ended it (cancelled it, or its deadline passed: not the
// store's own deadline, errOwnDeadline) says nothing of Redis, and reloads
// nothing (TestClusterCallerEndReloadsNoSlots): else every cancelled
// request of a busy process would have the client send CLUSTER SLOTS. The
// reload runs in the background, at most one at a time (go-redis
// coalesces them). Nil errors, and a store on any other client, are
// ignored.
func (s *Store) reloadSlots(ctx context.Context, errs ...error) {
	if s.cluster != nil && noReply(ctx, errs) {
		s.reload()
	}
}

// refused has the cluster client reload its slot map, at most once every
// refusedReload, when a node's open circuit refused a call: a replica
// that took the node's slots over has a breaker of its own, which the
// call finds once the map names it.
func (s *Store) refused() {
	if s.nodes.reloadDue() {
		s.reload()
	}
}

// reload has the cluster client reload its slot map (see reloadSlots).
func (s *Store) reload() {
	if s.onReload != nil {
		s.onReload()
	}
	s.cluster.ReloadState(context.Background())
}

// noReply reports whether any of errs, of calls under ctx, is a failure
// without a reply of Redis that its caller did not cause (see reloadSlots);
// a call the store never sent (unsent) is none.
func noReply(ctx context.Context, errs []error) bool {
	for _, err := range errs {
		var reply redis.Error
		if err == nil || errors.As(err, &reply) || unsent(err) {
			continue
		}
		if (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) && callerEnded(ctx) {
			continue
		}
		return true
	}
	return false
}

// errOwnDeadline is the cause of the end of a context the store bounds by
// a deadline of its own (WithTimeout's, a cross-slot undo's), which tells
// it from its caller's (context.Cause).
var errOwnDeadline = errors.New("redisstore: the store's own deadline passed")

// callerEnded reports whether ctx, a call's context, ended for its
// caller's reason (cancelled, or its caller's deadline passed), not the
// store's own deadline (errOwnDeadline).
func callerEnded(ctx context.Context) bool {
	return ctx.Err() != nil && context.Cause(ctx) != errOwnDeadline
}

// callContext returns the context of one call of the store: ctx bounded by
// the store's timeout (DefaultTimeout, or WithTimeout's), unless
// WithTimeout(0) set none, and the function that releases it.
func (s *Store) callContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.timeout > 0 {
		return context.WithTimeoutCause(ctx, s.timeout, errOwnDeadline)
	}
	return ctx, func() {}
}

// ownDeadline returns err, or, when err is a bare context error while
// parent, the caller's context, has not ended, an error of the store
// saying that op got no reply from Redis: the store's timeout, or a
// context error the client made of its own. So a bare context error is
// returned only when the caller's context ended, which the breaker reads
// (see WithCircuitBreaker). A wrapped one, such as a failed cross-slot
// undo's, already says what timed out.
//
// When the client's latest dial failed (recently, and no dial succeeded
// since: see dialWatch), the error names that failure too, and wraps it
// as well as the context's error: "connection refused" is Redis down,
// where a bare deadline would read as Redis slow.
func (s *Store) ownDeadline(op string, err error, parent context.Context) error {
	if le, ok := err.(*leftError); ok {
		// The Take's own error, as when no undo failed.
		return &leftError{err: s.ownDeadline(op, le.err, parent), undos: le.undos}
	}
	if err != context.DeadlineExceeded && err != context.Canceled || ctxDone(parent) != nil {
		return err
	}
	within := ""
	if err == context.DeadlineExceeded && s.timeout > 0 {
		within = " within " + s.timeout.String()
	}
	if cause := s.dials.cause(); cause != nil {
		return fmt.Errorf("redisstore: %s: no reply from Redis%s (the client's latest dial failed: %w): %w", op, within, cause, err)
	}
	if within != "" {
		return fmt.Errorf("redisstore: %s: no reply from Redis%s: %w", op, within, err)
	}
	return fmt.Errorf("redisstore: %s: %w", op, err)
}

// localNow returns the instant the breaker and the deny cache use: the
// injected clock's, or the local clock's.
func (s *Store) localNow(clockNow time.Time) time.Time {
	if s.clock != nil {
		return clockNow
	}
	return time.Now()
}

// request is one Take's script call: its keys and arguments. Requests and
// their slices are reused through reqPool when the call ended synchronously
// (see TakeInto); go-redis copies keys and arguments into its own command.
type request struct {
	checks []algorithms.Check
	infos  []*specInfo
	keys   []string
	tags   []string // per check: the hash tag (cluster only)
	// pass is the node breakers' pass of a split call (nil else), which
	// its parts note their outcomes in (see note).
	pass   *pass
	first  []int // per check: the index of its first key in keys
	argBuf []any // reused by args(nil, ...)
	ts, tn int64 // the injected instant (seconds, nanoseconds), when hasT
	hasT   bool
	minTTL int64
}

var reqPool = sync.Pool{New: func() any { return new(request) }}

func (s *Store) newRequest(checks []algorithms.Check, now time.Time) *request {
	r := reqPool.Get().(*request)
	r.checks = checks
	r.infos = grow(r.infos, len(checks))
	r.keys = r.keys[:0]
	r.first = grow(r.first, len(checks))
	r.tags = r.tags[:0]
	r.minTTL = ceilMillis(s.minTTL)
	if s.cluster != nil {
		r.tags = grow(r.tags, len(checks))
	}
	for i, c := range checks {
		si := s.specs.get(c.Spec, c.Limit)
		r.infos[i] = si
		k, tag := s.redisKey(c.Key, si)
		r.first[i] = len(r.keys)
		r.keys = append(r.keys, k)
		if si.code == codeLog {
			r.keys = append(r.keys, k+":l")
		}
		if s.cluster != nil {
			r.tags[i] = tag
		}
	}
	r.ts, r.tn, r.hasT = 0, 0, false
	if s.clock != nil {
		ns := now.UnixNano()
		r.ts = ns / 1e9
		r.tn = ns % 1e9
		if r.tn < 0 {
			r.ts--
			r.tn += 1e9
		}
		r.hasT = true
	}
	return r
}

// ceilMillis returns d >= 0 in whole milliseconds, rounded up, for any d
// up to math.MaxInt64 (adding 999999 ns first would overflow there).
func ceilMillis(d time.Duration) int64 {
	ms := int64(d / time.Millisecond)
	if d%time.Millisecond != 0 {
		ms++
	}
	return ms
}

// release returns r to the pool, dropping its references to the caller's
// data. Only a request no goroutine still uses may be released.
func (r *request) release() {
	if cap(r.keys) > 64 || cap(r.argBuf) > 512 {
		return // an unusually large Take: let it go
	}
	r.checks = nil
	r.pass = nil
	clear(r.infos)
	clear(r.keys[:cap(r.keys)])
	clear(r.tags)
	clear(r.argBuf[:cap(r.argBuf)])
	reqPool.Put(r)
}

// grow returns s resliced to n elements, reallocated if too small.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// args returns the script arguments for the checks idx (all when nil). The
// slice for all checks is r's own buffer, valid until r is released.
func (r *request) args(idx []int, mode int) []any {
	n := len(r.checks)
	if idx != nil {
		n = len(idx)
	}
	var a []any
	if idx == nil {
		a = r.argBuf[:0]
	}
	if cap(a) < 5+7*n {
		a = make([]any, 0, 5+7*n)
	}
	if r.hasT {
		a = append(a, r.ts, r.tn)
	} else {
		a = append(a, "", 0)
	}
	a = append(a, r.minTTL, mode, n)
	add := func(i int) {
		si := r.infos[i]
		cost := r.checks[i].Cost
		if cost == 0 {
			cost = 1
		}
		a = append(a, si.args[:]...)
		a = append(a, cost)
	}
	if idx == nil {
		for i := range r.checks {
			add(i)
		}
		r.argBuf = a
	} else {
		for _, i := range idx {
			add(i)
		}
	}
	return a
}

// compactArgs returns the arguments of a plain Take (mode 0) in the
// compact layout fast.lua reads: one "kind L W C Buckets MaxDelay cost"
// per check, after a header "c TS TN minTTL" (TS empty for the server's
// clock) unless the Take is on the server's clock with no minimum TTL
// (each argument is one more string Redis makes, and one more the script
// reads). The slice is r's own buffer, valid until r is released.
func (r *request) compactArgs() []any {
	a := r.argBuf[:0]
	if cap(a) < 1+len(r.checks) {
		a = make([]any, 0, 1+len(r.checks))
	}
	switch {
	case r.hasT:
		a = append(a, "c "+strconv.FormatInt(r.ts, 10)+" "+strconv.FormatInt(r.tn, 10)+" "+strconv.FormatInt(r.minTTL, 10))
	case r.minTTL != 0:
		a = append(a, "c  0 "+strconv.FormatInt(r.minTTL, 10))
	}
	for i, c := range r.checks {
		si := r.infos[i]
		if c.Cost <= 1 {
			a = append(a, si.arg1)
		} else {
			a = append(a, si.arg+" "+strconv.FormatInt(c.Cost, 10))
		}
	}
	r.argBuf = a
	return a
}

// keysOf returns the keys of the checks idx (all when nil: r's own slice).
func (r *request) keysOf(idx []int) []string {
	if idx == nil {
		return r.keys
	}
	var ks []string
	for _, i := range idx {
		ks = append(ks, r.keys[r.first[i]])
		if r.infos[i].code == codeLog {
			ks = append(ks, r.keys[r.first[i]+1])
		}
	}
	return ks
}

// run runs the whole request as one script call on c.
func (s *Store) run(ctx context.Context, c redis.UniversalClient, r *request, dst []algorithms.Decision) error {
	var args []any
	if s.noFunctions.Load() {
		args = r.args(nil, modeNormal) // as a script, the wide layout parses faster
	} else {
		args = r.compactArgs()
	}
	res, err := s.eval(ctx, opTake, c, r.keys, args)
	if err != nil {
		return err
	}
	return parseDecisions(res, r, nil, dst)
}

// synchronous reports whether eval runs the script on the caller's
// goroutine for ctx (and so has finished with its arguments when it returns).
func (s *Store) synchronous(ctx context.Context) bool {
	return !s.guard || ctx.Done() == nil
}

// eval runs the script for op (opTake, opPeek: the call named in its
// errors), honouring ctx even when the client does not. Once the store is
// closed it starts no goroutine (Close has waited for those it knows of):
// it returns ErrClosed.
func (s *Store) eval(ctx context.Context, op string, c redis.UniversalClient, keys []string, args []any) (any, error) {
	return s.evalOr(ctx, op, c, keys, args, false, false, nil)
}

// evalOnce is eval for a call that gives units back (a give-back, a
// refund) of checks, which must run at most once (see call), and after
// which the deny cache forgets checks' keys, even when its caller has
// stopped waiting for it (see evalOr).
func (s *Store) evalOnce(ctx context.Context, op string, c redis.UniversalClient, keys []string, args []any, checks []algorithms.Check) (any, error) {
	return s.evalOr(ctx, op, c, keys, args, false, true, checks)
}

// evalOr is eval; after Close, with mustRun, it runs the script on the
// caller's goroutine instead of returning ErrClosed (a cross-slot undo,
// which must not leave a reservation in place). With once, the client
// does not send the call again when it failed after it may have been sent
// (see call). A call that gives units back (forget: its checks) and that
// its caller stops waiting for at ctx's end has the deny cache forget
// forget's keys once it has ended (see Store.forgetLater).
func (s *Store) evalOr(ctx context.Context, op string, c redis.UniversalClient, keys []string, args []any, mustRun, once bool, forget []algorithms.Check) (any, error) {
	if s.synchronous(ctx) {
		v, err := s.call(ctx, op, c, keys, args, once)
		return wrap(ctx, op, v, err)
	}
	s.closing.RLock()
	if s.closed.Load() {
		s.closing.RUnlock()
		if !mustRun {
			return nil, algorithms.ErrClosed
		}
		v, err := s.call(ctx, op, c, keys, args, once)
		return wrap(ctx, op, v, err)
	}
	s.inflight.Add(1)
	s.closing.RUnlock()
	ch := make(chan asyncResult, 1)
	h := new(handoff)
	go func() {
		defer s.inflight.Done()
		defer h.ended()
		defer h.passOn(ch)
		v, err := s.call(ctx, op, c, keys, args, once)
		ch <- asyncResult{v: v, err: err}
	}()
	select {
	case r := <-ch:
		r.raise()
		return wrap(ctx, op, r.v, r.err)
	case <-ctx.Done():
		r, ok := ready(ch)
		if !ok {
			r, ok = h.leave(ch, s.forgetLater(forget))
		}
		if ok {
			r.raise()
			return wrap(ctx, op, r.v, r.err)
		}
		return nil, ctx.Err()
	}
}

// ready returns the outcome in ch, if any, without waiting: a caller whose
// context ended looks once more, since a select picks at random among
// ready cases, and a reply that arrived as the context ended is Redis's
// answer, which the call is to return, not the context's error
// (TestReplyReadyAtContextEndIsReturned).
func ready(ch <-chan asyncResult) (asyncResult, bool) {
	select {
	case r := <-ch:
		return r, true
	default:
		return asyncResult{}, false
	}
}

// asyncResult is the outcome of a call run on a goroutine of the store's
// own (evalOr, del): its reply and error, or its panic.
type asyncResult struct {
	v        any
	err      error
	panicked any // the call's panic, handed to the caller
}

// raise panics with r's panic, if any, on the caller's goroutine.
func (r asyncResult) raise() {
	if r.panicked != nil {
		panic(r.panicked)
	}
}

// handoff hands a panic of a call run on a goroutine of the store's own
// (a client hook's, say) to its caller, as on the caller's own goroutine
// (where net/http, say, recovers it), while the caller waits: the caller
// raises it (asyncResult.raise); once the caller has left at its
// context's end (leave), the goroutine panics, as any goroutine's would.
// A caller that leaves may also leave the goroutine a function to run
// once the call has ended (late: see Store.forgetLater).
type handoff struct {
	mu   sync.Mutex
	left bool
	late func()
}

// passOn, deferred by the goroutine, recovers its panic and hands it to
// the caller through ch, or panics again when the caller has left.
func (h *handoff) passOn(ch chan<- asyncResult) {
	p := recover()
	if p == nil {
		return
	}
	h.mu.Lock()
	gone := h.left
	if !gone {
		ch <- asyncResult{panicked: p}
	}
	h.mu.Unlock()
	if gone {
		panic(p)
	}
}

// ended, deferred by the goroutine (to run after passOn), runs the late
// function of a caller that left before the call ended.
func (h *handoff) ended() {
	h.mu.Lock()
	late := h.late
	h.mu.Unlock()
	if late != nil {
		late()
	}
}

// leave marks the caller gone, leaving late (if not nil) to run once the
// call has ended, and returns the call's outcome (reply or panic) when it
// came before: the caller returns it, or raises it, as one ready at its
// context's end (see ready), since a call that ended before leave runs no
// late function and nothing else would hand its reply on
// (TestLeaveReturnsAReplyThatCameFirst).
func (h *handoff) leave(ch <-chan asyncResult, late func()) (asyncResult, bool) {
	h.mu.Lock()
	h.left = true
	h.late = late
	h.mu.Unlock()
	return ready(ch)
}

// call runs the take function, or a Peek's (op opPeek), as callAs does.
// A Peek is sent as a read-write call (FCALL, EVALSHA), as a Take, until
// one is refused its keys as such (NOPERM): the user may read the store's
// keys but not write them (Redis 7 key permissions, %R~), and FCALL and
// EVALSHA declare their keys read-write whatever the code does. That
// Peek, and every later one of the store, is sent read-only instead
// (FCALL_RO, EVALSHA_RO, EVAL_RO), which such a user may send and which
// runs the Peek, since it writes nothing (TestPeekAsReadOnlyKeysUser).
// A server without the read-only commands (before Redis 7) answers the
// Peek with the refusal. The read-only calls are not the default: a
// cluster client with ReadOnly (or RouteByLatency, RouteRandomly) sends
// them to replicas, whose state lags the master's.
func (s *Store) call(ctx context.Context, op string, c redis.UniversalClient, keys []string, args []any, once bool) (any, error) {
	if op != opPeek || s.readPeeks.Load() {
		return s.callAs(ctx, op, op == opPeek, c, keys, args, once)
	}
	v, err := s.callAs(ctx, op, false, c, keys, args, once)
	if err == nil || !keysRefused(err) {
		return v, err
	}
	rv, rerr := s.callAs(ctx, op, true, c, keys, args, once)
	if rerr != nil && (keysRefused(rerr) || strings.Contains(strings.ToLower(rerr.Error()), "unknown command")) {
		return v, err // no better read-only: the user may not read the keys either, or the server has no such commands
	}
	s.readPeeks.Store(true)
	return rv, rerr
}

// keysRefused reports whether err is Redis's refusal of a command's keys
// to the user (ACL: "NOPERM ... keys ...", "NOPERM No permissions to
// access a key"), not of the command itself.
func keysRefused(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	msg := strings.ToLower(re.Error())
	return strings.HasPrefix(msg, "noperm") && strings.Contains(msg, " key")
}

// callAs runs the take function (FCALL; a Peek's, op opPeek, the peek
// function: see takeLibrary), loading the library when the server
// does not have it (the first call, after FUNCTION FLUSH, on a new node:
// once for the calls that find it missing together, see loadShared),
// and runs it again. When the server has no functions (before Redis 7) or
// the user may not load or call them, the store falls back, for good, to
// the script (EVALSHA, EVAL on NOSCRIPT). A call whose function is still
// missing after the load (on a Cluster, redirected to a node that serves
// no slot yet, such as one a slot is migrating to) runs as the script, and
// so, for unreachedFor (10 s), does every call that finds it missing,
// without loading it again; so does a call that finds it missing after
// each of loadTries loads, and the calls after it. A Peek whose load the server refuses (OOM,
// READONLY: a server refusing writes) runs as the script, which writes
// nothing; so does a Take, whose writes such a server refuses as they
// come, atomically (it fails, as it would have, unless it writes
// nothing: denied). The library (about 120 kB) is not sent again on each
// call there: for the refusedCalls calls after a refused load, a call
// that finds the function missing runs as the script without loading it,
// and the one after tries again (a server that accepts writes again gets
// it back within refusedCalls+1 calls; a call that finds the function
// there ends the count at once). Only the first call of a store, or one
// after a flush or on such a node, costs more than one round trip.
//
// With once, the client is told not to retry the command (go-redis
// otherwise sends it again when the connection fails, io.EOF or a read
// timeout, after it was sent): a call that gives units back (a give-back,
// a refund, a cross-slot undo) run twice would give them back twice, out
// of units other requests consumed, and admit more than the limit. Such a
// call fails instead; as with any error, it may have run once.
//
// With ro (a Peek's: see call), the commands are the read-only ones:
// FCALL_RO, EVALSHA_RO and EVAL_RO.
func (s *Store) callAs(ctx context.Context, op string, ro bool, c redis.UniversalClient, keys []string, args []any, once bool) (any, error) {
	if !s.noFunctions.Load() {
		seen := s.loads.Load()
		v, err := fcall(ctx, op, ro, c, keys, args, once)
		if err == nil || !functionsUnusable(err) && !functionMissing(err) {
			if s.refusals.Load() > 0 {
				s.refusals.Store(0) // the function ran: the library is back
			}
			return v, err
		}
		if functionMissing(err) {
			if s.refusals.Load() > 0 && s.refusals.Add(-1) >= 0 {
				// A load was refused lately (below): not again yet.
				return s.script(ctx, ro, c, keys, args, once)
			}
			if at := s.unreached.Load(); at != 0 && time.Since(procStart)-time.Duration(at) < unreachedFor {
				return s.script(ctx, ro, c, keys, args, once)
			}
			// Load the library, or take a load that ended meanwhile for
			// this call's, and call again, for as long as each try finds
			// the function missing after a load that may have preceded
			// its FCALL (fresh false: another call's load that ended
			// since this call read the count of loads, before its
			// FCALL maybe, and FUNCTION FLUSH or a restart since), or,
			// on a *redis.Client, after any load: such a call loads
			// the library as any call that finds it missing
			// (TestFunctionFlushedAgainAfterAnotherLoad), up to
			// loadTries times.
			var lerr error
			for try := 1; ; try++ {
				var fresh bool
				if fresh, lerr = s.loadShared(ctx, c, seen); lerr != nil {
					break
				}
				seen = s.loads.Load()
				v, err = fcall(ctx, op, ro, c, keys, args, once)
				if err == nil || !functionMissing(err) {
					return v, err
				}
				if _, plain := c.(*redis.Client); fresh && !plain {
					// Still missing, though every master the client
					// knows has had the library since this call's
					// FCALL: the call was redirected (ASK, MOVED) to a
					// node it does not list as a master yet, such as
					// one a slot is migrating to, which owns no slot.
					// (A *redis.Client follows no redirection: there,
					// the library went again since the load, and the
					// call loads it again, as after any flush:
					// TestFunctionFlushedAfterTheCallsOwnLoad. On a
					// Cluster a flush right after the load reads as a
					// redirection.)
					// This call runs as the script, which carries its
					// code, and so do the calls that find the function
					// missing for unreachedFor: a migration's every
					// call would load the library (about 120 kB) on
					// every master again.
					s.unreached.Store(int64(max(time.Since(procStart), 1)))
					return s.script(ctx, ro, c, keys, args, once)
				}
				if try == loadTries {
					// The function missing after each of loadTries
					// loads (each flushed again before this call's
					// FCALL; a proxy that sends the load to one server
					// and FCALL to another): this call runs as the
					// script, which carries its code, and so do the
					// calls that find the function missing for
					// unreachedFor, without sending the library (about
					// 120 kB) loadTries times each
					// (TestFunctionMissingAfterEveryLoad).
					s.unreached.Store(int64(max(time.Since(procStart), 1)))
					return s.script(ctx, ro, c, keys, args, once)
				}
			}
			if refusesWrites(lerr) {
				// The server refuses writes (at its maxmemory: OOM; a
				// read-only replica: READONLY), the load included. The
				// script needs no load: it answers a Peek, which writes
				// nothing, and a Take, whose writes the server refuses
				// as they come, before the first (the Take fails, as the
				// function would, unless it writes nothing). Sending the
				// library again on every call would cost about 120 kB
				// each, refused: the next refusedCalls calls that find
				// the function missing run as the script at once
				// (TestLoadRefusedNotResent).
				s.refusals.Store(refusedCalls)
				return s.script(ctx, ro, c, keys, args, once)
			}
			var refused redis.Error
			if op == opPeek && errors.As(lerr, &refused) && !functionsUnusable(lerr) {
				// The server refused the load (at its maxmemory: OOM; a
				// read-only replica: READONLY), as it refuses any write,
				// while a Peek writes nothing: the script, which needs no
				// load, answers it there (TestPeekNeedsNoWritesWithoutTheLibrary).
				return s.script(ctx, ro, c, keys, args, once)
			}
			if !functionsUnusable(lerr) {
				return nil, lerr
			}
		}
		s.noFunctions.Store(true)
	}
	return s.script(ctx, ro, c, keys, args, once)
}

// script runs the take code as a script: EVALSHA, and EVAL on NOSCRIPT
// (with ro, a Peek's: EVALSHA_RO, EVAL_RO; see call); with once, as
// commands the client does not retry (see callAs).
func (s *Store) script(ctx context.Context, ro bool, c redis.UniversalClient, keys []string, args []any, once bool) (any, error) {
	if !once {
		if ro {
			return takeScript.RunRO(ctx, c, keys, args...).Result()
		}
		return takeScript.Run(ctx, c, keys, args...).Result()
	}
	evalsha, eval := "evalsha", "eval"
	if ro {
		evalsha, eval = "evalsha_ro", "eval_ro"
	}
	v, err := scriptCall(ctx, c, evalsha, takeScript.Hash(), keys, args)
	if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		// Not run: the server does not have the script.
		return scriptCall(ctx, c, eval, takeScriptSource, keys, args)
	}
	return v, err
}

// loadTries bounds the loads a call waits for, or makes, while the
// function it calls is missing again after each (see call).
const loadTries = 3

// refusedCalls is how many calls after a load the server refused as a
// write (OOM, READONLY) run as the script without loading the library
// (see Store.refusals): one load in refusedCalls+1 calls at most while
// the server refuses writes, and the library back within as many calls
// once it accepts them.
const refusedCalls = 64

// refusesWrites reports whether err is a server's refusal of a write as
// such: at its maxmemory (OOM) or a read-only replica (READONLY).
func refusesWrites(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	msg := re.Error()
	return strings.HasPrefix(msg, "OOM ") || strings.HasPrefix(msg, "READONLY ")
}

// unreachedFor is how long after a call found the function missing just
// after a load the calls that find it missing run as the script without
// loading it again (see Store.unreached).
const unreachedFor = 10 * time.Second

// procStart is the origin of Store.unreached's instants (monotonic).
var procStart = time.Now()

// fcall runs the take function (op opPeek: the peek function), as
// go-redis's FCall does (with ro, FCallRO: see call), or, with once, as a
// command the client will not retry (see callAs).
func fcall(ctx context.Context, op string, ro bool, c redis.UniversalClient, keys []string, args []any, once bool) (any, error) {
	fn, fnArg := takeFunction, takeFunctionArg
	if op == opPeek {
		fn, fnArg = peekFunction, peekFunctionArg // no-writes: see takeLibrary; FCALL_RO runs it
	}
	name, nameArg := "fcall", any("fcall") // a constant's interface allocates nothing
	if ro {
		name, nameArg = "fcall_ro", any("fcall_ro")
	}
	if !once {
		// FCall's command (TestTakeCommandAsFCall), with the function's
		// name boxed once, not on every call.
		a := make([]any, 0, 3+len(keys)+len(args))
		a = append(a, nameArg, fnArg, len(keys))
		for _, k := range keys {
			a = append(a, k)
		}
		a = append(a, args...)
		cmd := redis.NewCmd(ctx, a...)
		if len(keys) > 0 {
			cmd.SetFirstKeyPos(3)
		}
		_ = c.Process(ctx, cmd)
		return cmd.Result()
	}
	return scriptCall(ctx, c, name, fn, keys, args)
}

// takeFunctionArg and peekFunctionArg are takeFunction and peekFunction
// as command arguments: a string put in an interface allocates.
var takeFunctionArg, peekFunctionArg any = takeFunction, peekFunction

// scriptCall sends "name code numkeys keys... args..." (FCALL, EVALSHA,
// EVAL) as a command the client does not retry.
func scriptCall(ctx context.Context, c redis.UniversalClient, name, code string, keys []string, args []any) (any, error) {
	a := make([]any, 0, 3+len(keys)+len(args))
	a = append(a, name, code, len(keys))
	for _, k := range keys {
		a = append(a, k)
	}
	a = append(a, args...)
	cmd := noRetryCmd{redis.NewCmd(ctx, a...)}
	_ = c.Process(ctx, cmd)
	return cmd.Result()
}

// noRetryCmd is a command go-redis sends at most once: after a failure that
// may have followed its sending, it returns the error rather than retry.
type noRetryCmd struct{ *redis.Cmd }

// NoRetry tells go-redis not to retry the command.
func (noRetryCmd) NoRetry() bool { return true }

// loadFlight is one load of the library (see Store.loadShared).
type loadFlight struct {
	done chan struct{} // closed when the load has ended
	// err is the load's error, set before done is closed, when shared:
	// a refusal Redis replied, which each waiter would get too.
	err    error
	shared bool
}

// loadShared loads the library as loadLibrary does, once for the calls
// that find the function missing at the same time (a store's first
// calls, the calls after a flush): the first of them loads it while the
// others wait for that load, each within its own context, and share its
// outcome: nil when it loaded, or the refusal Redis replied (OOM,
// READONLY, NOPERM, an unknown command), which it would reply to each.
// A load that ended otherwise (its caller's context ended: the caller
// gave up; a connection failed; a client hook panicked) says nothing to
// the waiters: one of them loads the library in turn, while the others
// wait for it. seen is the count of loads (Store.loads) read before the
// caller's FCALL: a load that succeeded since, which the FCALL may have
// reached the server before, is taken as the caller's own (nil at once),
// so that a call that found the function missing just as a load ended
// does not load it again; fresh then reports false (the load may have
// preceded the caller's FCALL), and true when the load ended after this
// call began to wait for it or led it (a function still missing after it
// was loaded on every master the client knows of: see call).
func (s *Store) loadShared(ctx context.Context, c redis.UniversalClient, seen uint64) (fresh bool, err error) {
	for waited := false; ; waited = true {
		s.loadMu.Lock()
		if s.loads.Load() != seen {
			s.loadMu.Unlock()
			return waited, nil
		}
		f := s.loading
		if f == nil {
			f = &loadFlight{done: make(chan struct{})}
			s.loading = f
			s.loadMu.Unlock()
			return true, s.leadLoad(ctx, c, f)
		}
		s.loadMu.Unlock()
		select {
		case <-f.done:
			if f.shared {
				return true, f.err
			}
		case <-ctx.Done():
			return true, ctx.Err()
		}
	}
}

// leadLoad runs the load f of loadShared, and ends it (even when the load
// panics) with its outcome for the waiters.
func (s *Store) leadLoad(ctx context.Context, c redis.UniversalClient, f *loadFlight) (err error) {
	ended := false // false after a panic: the waiters load in turn
	defer func() {
		s.loadMu.Lock()
		var refused redis.Error
		switch {
		case ended && err == nil:
			s.loads.Add(1)
		case ended && errors.As(err, &refused):
			f.err, f.shared = err, true
		}
		s.loading = nil
		s.loadMu.Unlock()
		close(f.done)
	}()
	err = s.loadLibrary(ctx, c)
	ended = true
	return err
}

// loadLibrary loads the library on the server, or on every master of a
// cluster (a replica gets it by replication). A library already there (a
// concurrent load) is fine.
func (s *Store) loadLibrary(ctx context.Context, c redis.UniversalClient) error {
	load := func(ctx context.Context, c redis.Cmdable) error {
		err := c.FunctionLoad(ctx, takeLibrary).Err()
		if err != nil && strings.Contains(err.Error(), "already exists") {
			return nil
		}
		return err
	}
	if cc, ok := c.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return load(ctx, m) })
	}
	return load(ctx, c)
}

// functionMissing reports whether err says the function is not loaded.
func functionMissing(err error) bool {
	return strings.Contains(err.Error(), "Function not found")
}

// functionsUnusable reports whether err says the server has no functions
// (an unknown command) or the user may not run FCALL or FUNCTION LOAD
// (NOPERM naming the command; a key the user may not touch is an error of
// the Take, which the script would meet too).
func functionsUnusable(err error) bool {
	msg := strings.ToLower(err.Error())
	if strings.HasPrefix(msg, "noperm") {
		return strings.Contains(msg, "fcall") || strings.Contains(msg, "function")
	}
	return strings.Contains(msg, "unknown command")
}

// wrap returns v, or the error of a failed call as opErr does.
func wrap(ctx context.Context, op string, v any, err error) (any, error) {
	if err == nil {
		return v, nil
	}
	return nil, opErr(ctx, op, err)
}

// opErr returns the context's error as is when the call failed because ctx
// ended (whatever the client made of it: a net timeout, say), a context
// error as is, and wraps any other error as op's (opTake, opPeek, ...).
func opErr(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctxDone(ctx); cerr != nil {
		return cerr
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("redisstore: %s: %w", op, err)
}

// ctxDone returns ctx's error, or context.DeadlineExceeded once its
// deadline has passed though its timer has not yet marked it done: go-redis
// (ContextTimeoutEnabled) gives the connection the context's deadline, and
// the read can fail with an i/o timeout a moment before ctx.Err() says why.
func ctxDone(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}

// Script modes.
const (
	modeNormal  = 0
	modeReserve = 1 // also return what undoing the writes needs
	modeUndo    = 2 // undo a reservation, then decide without consuming
	modePeek    = 3 // decide without consuming (only the state-neutral writes of a denied Take)
)

// parseDecisions reads the script's reply for the checks idx (all when nil)
// into dst. Every assertion is checked: a surprise is an error.
func parseDecisions(res any, r *request, idx []int, dst []algorithms.Decision) error {
	vals, ok := res.([]any)
	n := len(r.checks)
	if idx != nil {
		n = len(idx)
	}
	if !ok || len(vals) < replyWidth*n {
		return fmt.Errorf("redisstore: unexpected script reply %T of length %d for %d checks", res, len(vals), n)
	}
	for j := range n {
		i := j
		if idx != nil {
			i = idx[j]
		}
		d, err := decodeDecision(vals[j*replyWidth:], r.infos[i].capacity)
		if err != nil {
			return err
		}
		dst[i] = d
	}
	return nil
}

// decodeDecision reads one check's replyWidth integers at the start of vals
// (see lua/main.lua): 2·Remaining + allowed, then Delay when allowed or
// RetryAfter when denied, ResetAfter, NextAfter.
func decodeDecision(vals []any, limit int64) (algorithms.Decision, error) {
	var v [replyWidth]int64
	for f := range v {
		x, ok := vals[f].(int64)
		if !ok || x < 0 {
			return algorithms.Decision{}, fmt.Errorf("redisstore: unexpected value %v (%T) in script reply", vals[f], vals[f])
		}
		v[f] = x
	}
	d := algorithms.Decision{
		Allowed:    v[0]&1 == 1,
		Limit:      limit,
		Remaining:  v[0] >> 1,
		ResetAfter: time.Duration(v[2]),
		NextAfter:  time.Duration(v[3]),
	}
	if d.Allowed {
		d.Delay = time.Duration(v[1])
	} else {
		d.RetryAfter = time.Duration(v[1])
	}
	return d, nil
}
