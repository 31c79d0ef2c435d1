package middleware

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/nilness"
	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// An Option configures a Middleware at construction.
type Option func(*Middleware) error

// A Failure says what the middleware does when the store fails (returns an
// error other than a denial). Every failure is also counted and passed to
// the error handler; no error text reaches the client.
type Failure struct {
	mode       failureMode
	store      algorithms.Store
	retryAfter time.Duration
}

type failureMode int

const (
	failOpen failureMode = iota
	failClosed
	fallBack
)

// FailOpen lets requests through unlimited while the store fails, without
// rate-limit headers. It is the default: an outage of the limiter does not
// become an outage of the service. It is not silent: the failures are
// counted (Stats.StoreErrors), passed to [WithErrorHandler], and the change
// of [State] goes to the observers ([WithObserver], [WithLogger]), or is
// logged on [log/slog.Default] when there are none.
func FailOpen() Failure { return Failure{mode: failOpen} }

// FailClosed answers 503 Service Unavailable with Retry-After (retryAfter
// in whole seconds, rounded up, at least 1; longer while a middleware
// further out that admitted the request with its last units would refuse
// the retry) while the store fails: for endpoints where an unlimited
// request is worse than none, such as login.
func FailClosed(retryAfter time.Duration) Failure {
	return Failure{mode: failClosed, retryAfter: retryAfter}
}

// FallBack decides with store (typically an in-memory store: limits per
// instance instead of shared) while the primary store fails; if the
// fallback fails too, the request is let through (fail open).
func FallBack(store algorithms.Store) Failure { return Failure{mode: fallBack, store: store} }

// OnStoreError sets what happens when the store fails; the default is
// [FailOpen]. A store that admits a request with a Delay its policy cannot
// give (negative, on a kind other than leaky_queue, or beyond the queue's
// MaxDelay) has failed too: the request is not held for it, and the error
// handler is told.
func OnStoreError(f Failure) Option {
	return func(m *Middleware) error {
		if f.mode == fallBack && nilness.Is(f.store) {
			return errors.New("middleware: OnStoreError: FallBack store is nil")
		}
		if f.mode == failClosed && f.retryAfter < 0 {
			return errors.New("middleware: OnStoreError: FailClosed retryAfter is negative")
		}
		m.failure = f
		return nil
	}
}

// WithBreaker sets the circuit breaker that keeps a failing store from
// adding its latency (a timeout, say) to every request: after failures
// consecutive store errors, the middleware stops calling the store for
// cooldown and applies the failure mode at once; then one request probes
// the store, and a success closes the breaker, a failure opens it for
// another cooldown from that failure. The default is 5 failures
// and a 5-second cooldown; failures 0 disables the breaker. A cooldown
// longer than the clock can count from now (up to the largest Duration)
// keeps the breaker open until the last instant a Unix time in
// nanoseconds holds, in the year 2262.
//
// Only failures of the store's backend count, so that no client can open
// the circuit for every client. A store call runs on its request's
// context, which the client ends when it goes away and which a server-side
// timeout ([http.TimeoutHandler], a deadline a middleware further out
// sets) ends at its deadline; such calls are told apart as redisstore's
// own breaker tells them (redisstore.WithCircuitBreaker):
//
//   - A call whose request was cancelled (its client went away) never
//     counts, whatever the store was doing.
//   - A call that ended at its request's deadline counts only when the
//     backend had a fair chance to answer it: the call began at least
//     50 ms before that deadline (read on the system clock, as context
//     deadlines are), and no store call got an answer from the backend
//     while it waited. A deadline already near when the call began would
//     have passed with a healthy backend too, and an answer to another call
//     shows the backend answering (the deadline was short for the load, as
//     in a burst). A backend that answers nothing for that long is failing,
//     whoever's deadline ends the calls: a hanging store behind server-side
//     timeouts opens the breaker, as it does behind a timeout of the
//     store's own (redisstore.WithTimeout).
//
// The calls that do not count are neither failures nor successes, and
// neither are a check the store calls invalid ([algorithms.ErrInvalidSpec],
// [algorithms.ErrInvalidCost]) nor a store its owner closed
// ([algorithms.ErrClosed], as when a shutdown closes it before the server
// has drained): no backend failed, and a closed store answers at once, so
// it adds no latency for the breaker to save; they leave the [State] as it
// was. An error about the value one key holds ([algorithms.ErrKeyState],
// as the Redis store returns for a key it did not write) is the backend's
// answer and ends a run of failures as a success does, and so is a refusal
// of the call for now ([algorithms.ErrTryAgain], as the Redis store
// returns while a Redis Cluster slot the call names migrates): a routine
// resharding does not open the circuit for every key. A refusal of the
// store's own circuit breaker ([algorithms.ErrCircuitOpen], as the Redis
// store returns it for a Cluster master whose circuit it opened) is
// neither: the store sent nothing and waited for nothing, and its breaker
// says nothing of the masters the other keys need, so that one failing
// node neither opens nor closes this breaker (a run of failures goes on
// through it). The error still
// goes to the error handler, and the request is answered as its context
// allows (Stats.Abandoned) or by the failure mode (Stats.StoreErrors). A
// probe whose call says nothing of the backend lets the next request
// probe.
func WithBreaker(failures int, cooldown time.Duration) Option {
	return func(m *Middleware) error {
		if failures < 0 {
			return errors.New("middleware: WithBreaker: failures is negative")
		}
		if failures > 0 && cooldown <= 0 {
			return errors.New("middleware: WithBreaker: cooldown must be positive")
		}
		m.breakAfter, m.cooldown = int64(failures), cooldown
		return nil
	}
}

// WithHeaders selects the rate-limit header profile; the default is [IETF].
// With many stacked policies, [IETFMostConstraining] keeps IETF's
// RateLimit field to one member, the most constraining policy's.
// A middleware nested inside another one that wrote rate-limit headers for
// the request writes in that one's profile, whatever its own (but
// [NoHeaders]: one built with it writes none, and its policies are not
// reported), so that the response carries one profile whose fields all
// parse: the list profiles add a field line per middleware (of one
// RateLimit member under IETFMostConstraining: the most constraining of
// that middleware's policies), the
// single-valued ones report the policy with the lowest remaining of both
// (on a tie, the one whose allowance takes longer to come back), as one
// middleware holding both would.
// (A policy the two share,
// under one key, is reported once: see [ErrCountedTwice].) When a
// middleware further in holds the request for a leaky_queue Delay, the
// times the middlewares further out wrote before the hold are counted from
// its end, as the middleware counts its own. (An outer middleware built
// [WithoutContext] is not seen, nor the hold of one further in.)
func WithHeaders(p Profile) Option {
	return func(m *Middleware) error {
		if p < IETF || p > IETFMostConstraining {
			return errors.New("middleware: WithHeaders: unknown profile " + p.String())
		}
		m.profile = p
		return nil
	}
}

// WithPartitionKey adds the pk parameter to each member of the IETF
// RateLimit field: a Structured Field byte sequence (":base64:", standard
// base64) holding the first 9 bytes of SHA-256 over secret followed by the
// key as the store sees it (the policy's name, a colon and the client's
// key: "per-ip:192.0.2.1"), as [LogPartitionKey] hashes it. The raw key is
// never sent; the secret (at least 16 bytes, kept on the server) keeps a small key
// space such as IPv4 addresses from being enumerated back from the hash.
// Off by default.
func WithPartitionKey(secret []byte) Option {
	return func(m *Middleware) error {
		if len(secret) < 16 {
			return errors.New("middleware: WithPartitionKey: secret must be at least 16 bytes")
		}
		m.pkSecret = append([]byte(nil), secret...)
		return nil
	}
}

// WithClock sets the clock the middleware reads for LegacyUnix reset times,
// the breaker's cooldown, the latencies it reports (Observer, Feedback) and
// how long a leaky_queue request was held (for the reset times of its
// headers, and for its refund when it was abandoned), and the time from
// a Take to the give-back of a response a policy does not count
// ([policy.CountIf]); the default is [algorithms.SystemClock]. The store
// has its own clock: a give-back reckons the Take from the store's clock
// less that time, so the two clocks should run at the same pace.
func WithClock(c algorithms.Clock) Option {
	return func(m *Middleware) error {
		if nilness.Is(c) {
			return errors.New("middleware: WithClock: clock is nil")
		}
		m.clock = c
		return nil
	}
}

// WithWait sets how the middleware holds a request that a leaky_queue
// policy admitted with a Delay. wait must return nil after d, or the
// context's error as soon as it is done (the client went away). The default
// waits on a timer. Tests inject a wait that advances a fake clock.
func WithWait(wait func(ctx context.Context, d time.Duration) error) Option {
	return func(m *Middleware) error {
		if wait == nil {
			return errors.New("middleware: WithWait: wait is nil")
		}
		m.wait = wait
		return nil
	}
}

// WithErrorHandler sets the function told of every failure: store errors
// (wrapped, with errors.Is matching the store's error), keys that could not
// be extracted (*policy.KeyError), costs out of range (*policy.CostError),
// and leaky_queue holds cut short or refused at once, their request's
// deadline coming at or before its turn (both matching the context's error with
// errors.Is). The default discards them; they are still counted in
// [Middleware.Stats]. It must be safe for concurrent use and should not block.
func WithErrorHandler(onError func(r *http.Request, err error)) Option {
	return func(m *Middleware) error {
		if onError == nil {
			return errors.New("middleware: WithErrorHandler: handler is nil")
		}
		m.onError = onError
		return nil
	}
}

// WithDenyHandler replaces the whole 429 response. The handler is called
// for a request the policies deny, with the rate-limit headers already set
// (delete them if unwanted); it writes the status, Retry-After (see
// [Result.RetryAfter]: the default 429's, the middlewares further out
// included), Cache-Control and the body. It is also called for a
// request whose cost a policy can never admit: then res.Err() is the
// *policy.CostError (naming every such policy: see its Others and All),
// res holds no decisions (res.Taken() is false), the middleware sets no
// rate-limit header (a middleware further out that admitted the request
// has set its own), and waiting does not help (the default answer is a
// 429 without Retry-After). A cost above a lowered limit that the
// configured one holds is a denial ([policy.Result.AboveLimit] reports
// the policies it is above), with decisions, headers and a RetryAfter
// like any other (see [Middleware.SetLimit]). Its request carries res in its context,
// as a handler's does ([FromContext]; not with [WithoutContext]). It must
// be safe for concurrent use.
func WithDenyHandler(deny func(w http.ResponseWriter, r *http.Request, res *Result)) Option {
	return func(m *Middleware) error {
		if deny == nil {
			return errors.New("middleware: WithDenyHandler: handler is nil")
		}
		m.onDeny = deny
		return nil
	}
}

// WithRejectHandler replaces the refusals other than a denial's 429 (which
// [WithDenyHandler] replaces): the 400 or 403 of a request a policy finds
// no key for, and the 503s of a store failure under FailClosed, of a
// leaky_queue hold the request's context cuts short, and of a client gone
// while its request was decided. The handler is called instead of
// writing the default problem+json response; it writes the status, the
// Retry-After it wants (see [Rejection.RetryAfter]), Cache-Control and the
// body, and should not show rej.Err to the client. Its request carries
// the Result in its context, as a handler's does ([FromContext]; not with
// [WithoutContext]). It must be safe for concurrent use.
func WithRejectHandler(reject func(w http.ResponseWriter, r *http.Request, rej Rejection)) Option {
	return func(m *Middleware) error {
		if reject == nil {
			return errors.New("middleware: WithRejectHandler: handler is nil")
		}
		m.onReject = reject
		return nil
	}
}

// WithoutContext keeps the decision out of the request context: the
// request is passed on as it came, so [FromContext] downstream finds
// nothing, and a middleware nested inside this one does not see its
// headers (single-valued profiles then report the inner policies alone).
// What it saves is the request copy and the Result that carry the decision
// downstream (704 bytes to 1.3 KB per request, most of the middleware's cost); the
// Result passed to the deny handler, the reject handler (its
// Rejection.Result), the shadow report and the [Observer]
// is then recycled after the request and must not be kept after the call,
// nor the strings of its keys (Result.Key), which point into it and are
// overwritten by a later request: copy them (strings.Clone) to keep them.
// For the same reason the store, and the fallback store, must not keep the
// keys of the checks they are given.
func WithoutContext() Option {
	return func(m *Middleware) error {
		m.noContext = true
		return nil
	}
}

// WithSkip exempts the requests for which skip returns true: they are not
// evaluated, counted or given headers. See [SkipPaths] and [SkipPrefixes].
// A browser's CORS preflight (an OPTIONS request before a cross-origin
// call) counts like any request under the policies without methods: a
// cross-origin API call then costs two units. To exempt preflights, skip
// them (r.Method == http.MethodOptions) or restrict the policies' methods
// (policy.WithMethods).
func WithSkip(skip func(*http.Request) bool) Option {
	return func(m *Middleware) error {
		if skip == nil {
			return errors.New("middleware: WithSkip: skip is nil")
		}
		m.skip = skip
		return nil
	}
}

// WithShadow turns on dry-run mode: the middleware evaluates every request,
// consumes quota and sets headers as usual, but never rejects and never
// holds a request: it answers no 429, 400, 403 or 503 of its own, and its
// handler answers every request it evaluates. Each request it would have
// rejected is counted as shadow-denied and passed to report (which may be
// nil; it must be safe for concurrent use), with a copy of the request the
// handler then gets (its context holds the Result; a form report parses
// on it is the handler's too), which report may keep or hand to another
// goroutine: nothing writes it once report returns:
//   - one a policy denied, found no key for, or could not charge its cost;
//   - one the store failed to decide under [FailClosed]: shadow mode tries
//     the failure mode too, and a 503 during an outage is the refusal it
//     is there to show, not to make (under [FailOpen] such a request is
//     counted as failed open, as outside shadow mode);
//   - one whose context ended (its client gone, a server-side deadline
//     run out) while the store decided it, which is answered 503 outside
//     shadow mode: it goes on undecided, its Result's Err the store's
//     error, to a handler that sees its context ended, as it would without
//     the middleware.
//
// The Result of a request let through undecided has no decisions
// (Result.Taken is false), and the middleware sets no rate-limit headers
// for it. Use it to try new limits on live traffic, under names of their
// own: a shadow policy of the same name and Spec as an enforcing one on
// the same store (a copy of the rules under trial, or the same key
// function spelt differently) shares its counters (the name namespaces
// them), so the requests it counts take the enforcing one's allowance.
func WithShadow(report func(r *http.Request, res *Result)) Option {
	return func(m *Middleware) error {
		m.shadow = true
		m.onShadow = report
		return nil
	}
}

// WithPatternFunc sets the function returning the route pattern of a
// request, for policies restricted with [policy.WithRoutes]; see
// [policy.WithPatternFunc]. The default reads the pattern the router set
// ([policy.RoutePattern]), which exists only after routing. For a middleware
// wrapping a whole ServeMux use [policy.ServeMuxPattern]; for one installed
// with r.Use on chi's top-level router r, [policy.ChiPattern](r), which asks
// r for the route with the method and path chi routes by (install the
// limiter after every middleware that rewrites the path, such as chi's
// StripSlashes):
//
//	r.Use(middleware.MustNew(store, policies,
//		middleware.WithPatternFunc(policy.ChiPattern(r))).Handler)
//
// A request the function finds no route for is taken for one the router
// answers itself (a 404 or 405): [Stats] counts it (Unrouted), and it is
// not reported. [ErrUnrouted] is reported, once, if the router routes
// such a request all the same: the function asks another router.
func WithPatternFunc(pattern func(*http.Request) string) Option {
	return func(m *Middleware) error {
		if pattern == nil {
			return errors.New("middleware: WithPatternFunc: function is nil")
		}
		m.pattern = pattern
		return nil
	}
}

// WithProblemType sets the "type" URI of 429 problem details; the default
// is [ProblemTypeQuotaExceeded]. "about:blank" is the conservative choice
// while the IANA registration is pending. uri must be a URI reference as
// RFC 3986 writes it (characters outside it percent-encoded, a scheme
// before any colon of the first segment).
func WithProblemType(uri string) Option {
	return func(m *Middleware) error {
		if uri == "" || !uriChars(uri) {
			return errors.New("middleware: WithProblemType: URI is empty or holds characters a URI must percent-encode")
		}
		if _, err := url.Parse(uri); err != nil {
			// A colon in a first segment no scheme precedes ("::"), or a
			// percent without two hex digits ("%zz").
			return fmt.Errorf("middleware: WithProblemType: %q is not a URI reference (RFC 3986)", uri)
		}
		m.problemType = uri
		return nil
	}
}

// SkipPaths returns a skip function (see [WithSkip]) for the GET and HEAD
// requests whose URL path is exactly one of paths, such as "/healthz", as
// the client wrote it. An entry may name the method instead, as a ServeMux
// pattern does ("POST /hooks/deploy"; a GET entry covers HEAD too); a bare
// path is a GET entry. A request to the path with another method is not
// skipped: it is not the health check, and a router serves it from
// another route when one matches ("POST /{page}" beside "GET /healthz":
// both chi and ServeMux send POST /healthz there), which the skip would
// leave unlimited. For the same reason a path the client percent-encoded
// in a way of its own ("/%68ealthz", whose r.URL.RawPath is set) is not
// skipped, since a router that routes on the raw path (chi does) may
// serve it from another route ("/{page}"). Methods are case-sensitive, as
// clients send them. A GET entry covers HEAD because a ServeMux serves
// HEAD from a GET pattern; chi does not, and serves HEAD /healthz from a
// route for every method that matches it (r.HandleFunc("/{page}", h)),
// when there is one: there, skip with a function of your own that
// checks the method too (r.Method == http.MethodGet && r.URL.Path ==
// "/healthz" && r.URL.RawPath == "").
//
// An entry that can never match a request (a path not beginning with "/",
// such as "healthz", but for the "*" of "OPTIONS *") is a mistake whose
// exemption would silently never happen: SkipPaths panics on it, naming
// it, as ServeMux.Handle does on a bad pattern (naming each such entry,
// one per line).
//
// The path alone does not tell the route under a ServeMux whose patterns
// name a host: "api.example.com/" serves GET /healthz on that host, which
// any client can name. There, skip by the pattern the mux will take:
//
//	middleware.WithSkip(func(r *http.Request) bool {
//		_, pattern := mux.Handler(r)
//		return pattern == "GET /healthz"
//	})
func SkipPaths(paths ...string) func(*http.Request) bool {
	type entry struct{ method, path string }
	set := make(map[entry]struct{}, len(paths))
	var bad []string // every entry that can never match, one per line
	for _, p := range paths {
		e := entry{http.MethodGet, p}
		if i := strings.IndexAny(p, " \t"); i > 0 && !strings.HasPrefix(p, "/") {
			e.method, e.path = p[:i], strings.TrimLeft(p[i+1:], " \t")
		}
		if !strings.HasPrefix(e.path, "/") && e.path != "*" {
			bad = append(bad, fmt.Sprintf("middleware: SkipPaths: entry %q: want a path beginning with \"/\", or a method, a space and such a path: it would never match", p))
			continue
		}
		set[e] = struct{}{}
	}
	if len(bad) > 0 {
		panic(strings.Join(bad, "\n"))
	}
	return func(r *http.Request) bool {
		if r.URL.RawPath != "" {
			return false
		}
		method := r.Method
		if method == http.MethodHead {
			if _, ok := set[entry{http.MethodHead, r.URL.Path}]; ok {
				return true
			}
			method = http.MethodGet
		}
		_, ok := set[entry{method, r.URL.Path}]
		return ok
	}
}

// SkipPrefixes returns a skip function (see [WithSkip]) for requests whose
// connecting peer (RemoteAddr) is in one of prefixes: load balancers'
// health checks, internal networks. A peer is compared as IPv4 when it is
// IPv4-mapped, and so is a prefix (::ffff:10.0.0.0/104 is 10.0.0.0/8); a
// link-local peer's zone is ignored. It does not read forwarding headers; to
// exempt clients behind a proxy, compare the address your keyfunc.IP trusts.
// A RemoteAddr with no port, as a middleware further out that took the
// client from such a header leaves it (a bare address, or an IPv6 one in
// brackets), is read as the address it is: behind chi's deprecated
// middleware.RealIP, which takes it from headers any client can send, a
// client could name an exempted address (X-Real-IP: 10.0.0.1) and skip
// every limit.
func SkipPrefixes(prefixes ...netip.Prefix) func(*http.Request) bool {
	ps := make([]netip.Prefix, len(prefixes))
	for i, p := range prefixes {
		// The peer is unmapped below: an IPv4-mapped prefix
		// (::ffff:192.0.2.0/120) becomes the IPv4 one it maps, as
		// keyfunc.TrustedProxies takes it, else it would hold no peer.
		ps[i] = keyfunc.NormalizePrefix(p)
	}
	return func(r *http.Request) bool {
		ap, err := netip.ParseAddrPort(r.RemoteAddr)
		var a netip.Addr
		if err == nil {
			a = ap.Addr()
		} else if b, ok := parseBareAddr(r.RemoteAddr); ok {
			a = b
		} else {
			// Not an address, with or without a port ("[2001:db8::1]",
			// as a middleware further out may leave it, is one).
			return false
		}
		// A zoned address (a link-local peer) is never in a prefix
		// (netip.Prefix.Contains): the zone names the interface, not the
		// address, as keyfunc's keys leave it out too.
		a = a.Unmap().WithZone("")
		for _, p := range ps {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
}

// uriChars reports whether s holds only characters a URI reference may
// hold as they are (RFC 3986: unreserved, reserved and '%'): none that
// JSON escapes either.
func uriChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~:/?#[]@!$&'()*+,;=%", c) >= 0:
		default:
			return false
		}
	}
	return true
}
