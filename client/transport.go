package client

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/nilness"
)

// A Transport is an http.RoundTripper that is a good citizen towards the
// servers it calls. Around another RoundTripper it
//
//   - paces: with [WithRate], requests with the same key (by default the
//     URL's host) leave one after another at the configured rate, each
//     waiting its turn in a leaky_queue; a request whose turn is further
//     away than the maximum wait, or than its context's deadline, fails at
//     once with a [*WaitError];
//   - backs off: a 429 Too Many Requests, 503 Service Unavailable or 529
//     (Anthropic's "overloaded", treated as a 503) is
//     retried, a bounded number of times, after the server's Retry-After
//     (delay-seconds or HTTP-date, or decimal seconds such as "1.5", rounded
//     up to the nanosecond) or else after an exponential backoff with
//     full jitter; only requests that can be replayed are retried, and not
//     when the wait would outlast the request's context deadline, nor when
//     the refusal says the request costs more than the server's quota;
//   - listens: it reads the server's RateLimit headers and, when no quota is
//     left, holds further requests with the same key until the announced
//     reset instead of sending them to earn a 429; a refusal's hold (its
//     Retry-After, or else its rate-limit fields) holds even the requests
//     already queued; a hold cut to [WithMaxRetryAfter] is
//     followed, while the server's longer wait lasts, by one request at a
//     time, a probe whose answer the others wait for (see [WithProactive]).
//
// Every wait honours the request's context: when it is done, RoundTrip
// returns ctx.Err() at once, even while another request of its key waits
// for a slow store. The turn it gave up is not lost: the requests of this
// Transport queued behind it move up a turn each (with proactive pacing,
// the default), and the last turn goes back to the store
// ([algorithms.Refunder]; both stores of this module are), which takes it
// when no other request queued there behind it, as with a fleet sharing a
// store; otherwise it stays used, a gap in what the server sees. Giving it
// back is a store call, which RoundTrip makes before it returns (it starts
// no goroutine), for at most a second: a store slow to answer delays the
// return of a request that gave up its turn (its context done, or its turn
// past its deadline) by up to that second. The turns that fall within a
// refusal's hold (its Retry-After, or else the reset its rate-limit fields
// announce) are lost, but the requests that had them keep their places (see [WithProactive]); one given up moves
// nobody up. Retries take a new turn, as the server counts them too; a
// retry that waits for a server's hold takes it before the requests that
// arrived during that hold.
//
// All waiting goes through the [Clock] (see [WithClock]), so tests run in
// virtual time. A Transport is safe for concurrent use; build one with [New]
// and use it as the Transport of an http.Client.
type Transport struct {
	next    http.RoundTripper
	clock   Clock
	key     func(*http.Request) string
	limiter *algorithms.Limiter // nil: no pacing
	maxWait time.Duration

	retries       int
	base, ceiling time.Duration
	maxRetryAfter time.Duration
	methods       map[string]bool
	giveUpError   bool
	onRetry       func(Retry)

	randMu sync.Mutex
	src    rand.Source // nil: the global generator

	proactive bool
	holds     holds         // every hold: Retry-After and RateLimit fields
	firm      holds         // the holds of refusals alone (Retry-After, or else rate-limit fields), which hold queued requests too
	cuts      cuts          // the keys whose holds were cut short, which one probe at a time tests
	lines     lines         // the requests waiting for their turns, per key (proactive pacing)
	gate      gate          // the requests waiting for holds to pass, in arrival order (proactive pacing)
	interval  time.Duration // between two turns: Window/Limit, rounded down
	arrivals  atomic.Uint64 // the requests that arrived: each is numbered, in order
}

// New returns a Transport sending requests through next (http.DefaultTransport
// when nil, or a nil pointer such as a nil *http.Transport). Without options
// it does not pace, retries 429, 503 and 529 up to [DefaultRetries] times,
// and honours the server's rate-limit headers. A bad option is an error
// that names it.
func New(next http.RoundTripper, opts ...Option) (*Transport, error) {
	if nilness.Is(next) {
		// A nil *http.Transport too: it would panic at the first request.
		next = http.DefaultTransport
	}
	c := defaults()
	for i, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("client: New: option %d is nil", i)
		}
		if err := opt(&c); err != nil {
			return nil, err
		}
	}
	t := &Transport{
		next:          next,
		clock:         c.clock,
		key:           c.key,
		maxWait:       c.maxWait,
		retries:       c.retries,
		base:          c.base,
		ceiling:       c.ceiling,
		maxRetryAfter: c.maxRetryAfter,
		methods:       c.methods,
		giveUpError:   c.giveUpError,
		onRetry:       c.onRetry,
		src:           c.src,
		proactive:     c.proactive,
	}
	t.holds.m = map[string]time.Time{}
	t.firm.m = map[string]time.Time{}
	t.cuts.grace = 2 * c.maxWait
	if c.limit > 0 {
		spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: c.limit, Window: c.per, MaxDelay: c.maxWait}
		if err := spec.Validate(); err != nil {
			var se *algorithms.SpecError
			if errors.As(err, &se) && se.Field == "MaxDelay" {
				return nil, fmt.Errorf("client: WithMaxWait: %s", se.Reason)
			}
			return nil, fmt.Errorf("client: WithRate: %w", err)
		}
		store := c.store
		if store == nil {
			// On the system clock the store reads real time as its own
			// default does, the monotonic clock alone (it needs no wall
			// time: the Transport asks it for durations only); on any
			// other, the Transport's clock.
			var opts []algorithms.MemoryOption
			if _, system := c.clock.(systemClock); !system {
				opts = append(opts, algorithms.WithClock(c.clock))
			}
			mem, err := algorithms.NewMemoryStore(opts...)
			if err != nil {
				return nil, fmt.Errorf("client: %w", err)
			}
			store = mem
		}
		lim, err := algorithms.NewLimiter(store, spec)
		if err != nil {
			return nil, fmt.Errorf("client: %w", err)
		}
		t.limiter = lim
		t.interval = spec.Window / time.Duration(spec.Limit)
		t.lines.m = map[string]*line{}
	} else if c.store != nil {
		return nil, errors.New("client: WithStore: a store needs WithRate (it holds the pacing queues)")
	}
	return t, nil
}

// Spec returns the leaky_queue Spec the Transport paces with, and false when
// it does not pace (no [WithRate]).
func (t *Transport) Spec() (algorithms.Spec, bool) {
	if t.limiter == nil {
		return algorithms.Spec{}, false
	}
	return t.limiter.Spec(), true
}

// RoundTrip sends req, after waiting its turn, and retries it while the
// server answers 429, 503 or 529 and the retry policy allows. A 403 counts as a
// 429 when it refuses the request for its rate (some APIs answer 403: GitHub,
// for its primary and secondary limits), as its fields say: a Retry-After
// in any of its forms asking for a wait, or rate-limit fields announcing no
// quota left until a reset to come; any other 403 (one whose Retry-After
// asks for no wait among them) is returned at once. It returns the first
// response that is none of these, or — when it gives up — the last refusal
// (by default) or a [*RetryError] (with [WithGiveUpError]).
// It gives up at once, without waiting, when the refusal says the request
// can never be admitted: its rate-limit fields say it costs more than the
// quota (go-chi/httprate's X-RateLimit-Increment above X-RateLimit-Limit,
// each line a plain integer; see [HeaderXRateLimitIncrement]), whatever its
// Retry-After and with proactive pacing on or off; a refusal that says
// nothing of the request's cost is retried. It gives up at once too when
// the wait before the next
// attempt would end after the context's deadline, or when the part of it
// the server asked for (its Retry-After, or the hold its RateLimit fields
// announce) is longer than the maximum wait; and, that wait over, when the
// retry would wait longer than the maximum wait for its turn or a server's
// hold, or past the context's deadline (the last response then comes back
// with its body as read before the wait; one longer than 64 KiB, or not
// read in full within a second, is not kept, and the [*WaitError] comes
// back instead). A refusal that is retried, or given up on with
// [WithGiveUpError], has its body read (up to 64 KiB) and closed, so that
// its connection can be reused; a body that stalls is closed after a
// second of real time, not waited for. A response to a retry names req as
// its Request where the next RoundTripper named the copy of req it was
// sent (as net/http's Transport does after its own retries).
// A request an http.Client makes to follow a redirect (its Response a
// 3xx) waits first for that 3xx's Retry-After, in any of its forms: RFC
// 9110 asks the client to wait that long before it sends the redirected
// request; one longer than the maximum wait or [WithMaxRetryAfter], or
// past the context's deadline, fails at once with a held [*WaitError],
// nothing sent, and the wait counts against the maximum wait with the
// Retry-Afters of the redirects before it in its chain (one Client.Do
// waits no more than the maximum for all of them) and the holds the
// request meets next (see [WithMaxWait]).
// While a hold cut to [WithMaxRetryAfter] has passed and the longer wait
// the server announced has not, an attempt is sent only as its key's one
// probe, or once the probe's answer lets it go (see [WithProactive]); an
// attempt that cannot wait for that answer within the maximum wait ends as
// one whose wait is too long. Errors: ctx.Err() when the request's context ends during a
// wait, a [*WaitError] when the first attempt's wait would be too long or
// would outlast the context's deadline (it fails at once; while it waits
// for a probe's answer, when its maximum wait ends), the pacing
// store's error and a replayed body's GetBody error, each wrapped
// ("client: pacing store: ", "client: replaying the request body: ";
// errors.Is and errors.As reach them), the next RoundTripper's errors, as
// they are, and an error naming it when it returns neither a response nor
// an error.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	key := t.key(req)
	replayable := t.replayable(req)
	seq := t.arrivals.Add(1) // its place by arrival, kept by its retries
	r := req
	// The refusal a retry follows, its body read (nil when too long to
	// keep), its status and Retry-After: a retry that cannot have its turn
	// in time gives up with them.
	var last *http.Response
	var lastStatus int
	var lastRA time.Duration
	// The retry's place at the gate, taken as it began to wait for the
	// server's hold (see below); t.wait gives it up.
	var tk *ticket
	// The cut whose probe this request is, refused without a wait (see
	// below): its retry goes as the probe again. Should the request end
	// before that retry is sent, the role is handed on.
	var own *cut
	defer func() {
		if own != nil { // abort does nothing on nil: no call on the common path
			t.cuts.abort(own)
		}
	}()
	// waited: the wait for the server that counts against the maximum
	// wait with the holds of the first attempt.
	waited, err := t.redirectWait(ctx, req, key)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		if attempt > 1 {
			var err error
			if r, err = rewind(req); err != nil {
				tk.leave()
				return nil, err
			}
		}
		probe, err := t.wait(ctx, key, seq, tk, own, waited)
		tk, waited = nil, 0
		if err == nil {
			own = nil // the attempt goes; as the probe, when it had the role
		}
		if err != nil {
			closeBody(r)
			var we *WaitError
			if attempt == 1 || !errors.As(err, &we) {
				return nil, err
			}
			switch {
			case t.giveUpError:
				reason := reasonNoTurn
				if we.Deadline {
					reason = reasonDeadline
				}
				return nil, &RetryError{Attempts: attempt - 1, LastStatus: lastStatus, RetryAfter: lastRA, Reason: reason, Err: err}
			case last != nil:
				return last, nil
			}
			return nil, err
		}
		resp, err := t.send(r, probe)
		if err != nil {
			return nil, err
		}
		if resp == nil {
			return nil, fmt.Errorf("client: RoundTripper %T returned a nil *Response with a nil error", t.next)
		}
		if resp.Request == r && r != req {
			// The response names the caller's request, not the copy
			// sent for the retry, as net/http's Transport does after
			// its own retries.
			resp.Request = req
		}
		// The instant the response arrived, read once for the attempt,
		// when its fields are to be read: with proactive pacing, or for a
		// refusal (a 403 may be one). Its holds run from it.
		refused := backOff(resp.StatusCode)
		var now time.Time
		if refused || resp.StatusCode == http.StatusForbidden || t.proactive && key != "" {
			now = t.clock.Now()
		}
		if !refused && !rateLimited403(resp, now) {
			if t.proactive && key != "" {
				t.cuts.answer(key, probe, t.observe(key, resp.Header, now, 0, false, false))
			}
			return resp, nil
		}
		ra, hasRA := parseRetryAfter(resp.Header, now)
		// A Retry-After that asks for no wait ("0", a date not after now)
		// is no reason to come back at once: a retry in the same instant
		// would most likely be turned away again, the retries spent in a
		// burst. The backoff applies, as without one, and so do the
		// rate-limit fields (see observe).
		fromRA := hasRA && ra > 0
		if t.proactive && key != "" {
			renewed := t.observe(key, resp.Header, now, ra, hasRA, true)
			if probe != nil && !renewed && !fromRA && serverHold(resp.Header, now) <= 0 {
				// A refusal without a word on how long (no Retry-After, or
				// one asking for no wait, which is no usable one) lifts
				// nothing of the wait the server announced: the probe
				// keeps its role, its retry goes as the probe, and the
				// others wait on (a request that gives up hands the role
				// on).
				own = probe
			} else {
				t.cuts.answer(key, probe, renewed)
			}
		}
		var reason string
		switch {
		case neverFits(resp.Header):
			// No wait lets it in: retrying would only spend the
			// server's quota and the caller's time.
			reason = reasonNeverFits
		case !replayable:
			reason = reasonNoReplay
		case attempt > t.retries:
			reason = reasonExhausted
		case hasRA && ra > t.maxRetryAfter:
			reason = reasonTooLong
		case !fromRA && t.proactive && key != "" && serverHold(resp.Header, now) > t.maxRetryAfter:
			// The RateLimit fields announce a reset beyond the cap: a
			// retry at the cap (the hold is cut to it) would only earn
			// another refusal, as with a Retry-After beyond it.
			reason = reasonResetTooLong
		}
		if reason != "" {
			return t.giveUp(resp, attempt, ra, reason, nil)
		}
		wait, held := ra, ra // held: the part of the wait the server asked for
		if !fromRA {
			wait, held = t.backoff(attempt), 0
		}
		if t.proactive && key != "" {
			// The key's hold: this refusal's (its Retry-After, or else
			// its RateLimit fields, which may say when quota returns:
			// retrying earlier would only earn another 429), or a longer
			// one another response set meanwhile, which the retry waits
			// for as every request of key does.
			held = max(held, t.holds.remaining(key, now))
			wait = max(wait, held)
		}
		if held > t.maxWait {
			// The maximum wait bounds every wait for a server's hold, a
			// retry's as a new request's (see wait).
			return t.giveUp(resp, attempt, ra, reasonNoTurn, &WaitError{Key: key, Wait: held, MaxWait: t.maxWait, Held: true})
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait {
			// The retry could not leave before the deadline: sleeping
			// until then would only trade the server's answer for
			// ctx.Err(). So would a retry at once (a wait of 0) once the
			// deadline has passed during the attempt. A context's
			// deadline is real time, whatever the Transport's Clock.
			return t.giveUp(resp, attempt, ra, reasonDeadline, nil)
		}
		// The refusal's body is read and closed before the hook is told,
		// so that a panicking hook leaves no connection open.
		last, lastStatus, lastRA = keep(resp), resp.StatusCode, ra
		if t.onRetry != nil {
			t.onRetry(Retry{Request: req, Attempt: attempt, Status: resp.StatusCode, Wait: wait, RetryAfter: fromRA})
		}
		// The wait is the server's hold on key (observe recorded it):
		// t.wait sleeps through it for the retry, as for a new request,
		// counting it with any hold set meanwhile (a response to another
		// request of key) against the maximum wait, all of them together.
		viaHold := wait > 0 && wait == held && t.proactive && key != ""
		if viaHold && t.limiter != nil {
			// With pacing, t.wait keeps the requests that arrive during
			// the hold in order at the gate: the retry takes its place
			// there now, ahead of them, not once the hold has passed,
			// behind them all. (After onRetry: a panicking hook must not
			// leave the place taken.)
			tk = t.gate.enter(key, seq)
		}
		switch {
		case viaHold:
			// t.wait sleeps through the hold.
		case wait > 0:
			if err := t.clock.Sleep(ctx, wait); err != nil {
				return nil, err
			}
		default:
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
}

// CloseIdleConnections closes the idle connections of the next
// RoundTripper, when it can (http.Client.CloseIdleConnections calls it).
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// statusOverloaded is 529, which Anthropic's API answers when it is
// "temporarily overloaded" across all its users (overloaded_error); no RFC
// registers it.
const statusOverloaded = 529

// backOff reports whether status is a refusal that asks the client to come
// back later: 429 Too Many Requests, 503 Service Unavailable, or 529
// overloaded, which Anthropic's SDKs retry with a backoff, "honoring the
// retry-after header when present", as a 503 is.
func backOff(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable || status == statusOverloaded
}

// rateLimited403 reports whether resp is a 403 that refuses the request
// for its rate (some APIs answer 403 rather than 429: GitHub, for its
// primary and secondary limits), as its fields say: a Retry-After (in any
// of its forms) asking for a wait, or rate-limit fields announcing no
// quota left until a reset to come (see serverHold). Such a 403 is retried
// as a 429 is; any other 403 is the server's answer, returned at once,
// among them one whose Retry-After asks for no wait (0, or a date not
// after now: some servers put "Retry-After: 0" on every response), which
// says nothing of a rate, as a reset already past says nothing.
func rateLimited403(resp *http.Response, now time.Time) bool {
	if resp.StatusCode != http.StatusForbidden {
		return false
	}
	if ra, ok := parseRetryAfter(resp.Header, now); ok && ra > 0 {
		return true
	}
	return serverHold(resp.Header, now) > 0
}

// giveUp ends a request whose last response, resp, was a 429, 503 or 529 (or a
// rate-limited 403, see rateLimited403); err,
// when not nil, is the error that ended the retries.
func (t *Transport) giveUp(resp *http.Response, attempts int, ra time.Duration, reason string, err error) (*http.Response, error) {
	if !t.giveUpError {
		return resp, nil
	}
	drain(resp.Body)
	return nil, &RetryError{Attempts: attempts, LastStatus: resp.StatusCode, RetryAfter: ra, Reason: reason, Err: err}
}
