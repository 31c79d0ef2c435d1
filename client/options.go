package client

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/internal/nilness"
	"golang.org/x/net/idna"
)

// An Option configures a [Transport] at construction. An option given a bad
// value makes [New] fail with an error that names the option.
type Option func(*config) error

// Defaults.
const (
	// DefaultMaxWait is the longest a request waits for its turn or for a
	// server's hold to pass, unless [WithMaxWait] says otherwise.
	DefaultMaxWait = time.Minute
	// DefaultRetries is the number of retries after the first attempt.
	DefaultRetries = 3
	// DefaultBackoffBase is the ceiling of the first backoff wait.
	DefaultBackoffBase = 250 * time.Millisecond
	// DefaultBackoffMax bounds the ceiling of every backoff wait.
	DefaultBackoffMax = 30 * time.Second
	// DefaultMaxRetryAfter is the longest wait a server may ask for, in
	// Retry-After or in its RateLimit headers, that the Transport honours.
	DefaultMaxRetryAfter = time.Minute
)

type config struct {
	clock         Clock
	key           func(*http.Request) string
	store         algorithms.Store
	limit         int64
	per           time.Duration
	maxWait       time.Duration
	retries       int
	base, ceiling time.Duration
	maxRetryAfter time.Duration
	methods       map[string]bool
	giveUpError   bool
	proactive     bool
	onRetry       func(Retry)
	src           rand.Source
}

func defaults() config {
	return config{
		clock:         SystemClock,
		key:           HostKey,
		maxWait:       DefaultMaxWait,
		retries:       DefaultRetries,
		base:          DefaultBackoffBase,
		ceiling:       DefaultBackoffMax,
		maxRetryAfter: DefaultMaxRetryAfter,
		proactive:     true,
	}
}

// HostKey is the default pacing key: the request URL's host, lower-cased,
// with its port unless that is the scheme's default (80 for http, 443 for
// https), so that "https://api.example.com" and "https://api.example.com:443"
// share a queue (a URL with no host name, which net/http dials on the local
// system, keeps its port: "http://:80/" is keyed ":80"); likewise a fully
// qualified name's trailing dot is dropped ("api.example.com." is the same
// host) and an IPv6 literal is written in its canonical form
// ("[2001:db8:0:0::1]" is "[2001:db8::1]"; a zone is kept as written,
// "[FE80::1%eth0]" being "[fe80::1%eth0]", since interface names are
// case-sensitive; an IPv4-mapped one, "[::ffff:192.0.2.1]", which net/http
// dials over IPv4, is "192.0.2.1"), as is a port written with leading zeros
// (":08443" is ":8443"). A host name with non-ASCII characters is keyed by
// its ASCII (punycode) form, mapped by the IDNA lookup rules as net/http
// maps it to find the server it dials: "bücher.example", "BÜCHER.example"
// and "xn--bcher-kva.example" are one host, keyed "xn--bcher-kva.example",
// and "ｅｘａｍｐｌｅ.com" is "example.com". A name those rules refuse is
// keyed by its lower-cased form. Requests to one host wait their turn in
// one queue and share the holds that host asks for. A host in its key's
// form (lower-case ASCII) is keyed without allocating.
func HostKey(r *http.Request) string {
	hostport, scheme := r.Host, ""
	if r.URL != nil {
		scheme = r.URL.Scheme
		if r.URL.Host != "" {
			hostport = r.URL.Host
		}
	}
	// The port follows the last colon, unless that colon is inside an IPv6
	// literal's brackets.
	host, port := hostport, ""
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && strings.IndexByte(hostport[i:], ']') < 0 {
		host, port = hostport[:i], strings.ToLower(hostport[i+1:])
		if len(port) > 1 && port[0] == '0' {
			// The dialer reads the port as a number: "0443" is 443.
			if port = strings.TrimLeft(port, "0"); port == "" {
				port = "0"
			}
		}
		// The scheme's default port is dropped, but for no host name
		// (http://:80/, the local system): its key would be "", which
		// exempts the request.
		if host != "" && (port == "80" && strings.EqualFold(scheme, "http") || port == "443" && strings.EqualFold(scheme, "https")) {
			port = ""
		}
	}
	var key string
	if len(host) > 2 && host[0] == '[' && host[len(host)-1] == ']' {
		key = strings.ToLower(host)
		if a, err := netip.ParseAddr(host[1 : len(host)-1]); err == nil && a.Is6() {
			if a.Is4In6() {
				key = a.Unmap().String() // dialled over IPv4, as the IPv4 literal is; no zone there
			} else {
				key = "[" + a.String() + "]" // the zone as written: interface names are case-sensitive
			}
		}
	} else {
		key = asciiHost(host)
		if len(key) > 1 && strings.HasSuffix(key, ".") {
			key = key[:len(key)-1]
		}
	}
	switch {
	case port == "":
		return key
	case key == host && hostport[len(host)+1:] == port:
		return hostport // already in its key's form: no need to build it again
	}
	return key + ":" + port
}

// asciiHost returns the host name as net/http dials it, lower-cased: an
// ASCII name as it is, one with other characters mapped to ASCII by the IDNA
// lookup rules, or, if those rules refuse it, the name as it is. A name
// already lower-case ASCII is returned without allocating.
func asciiHost(host string) string {
	lower := true
	for i := 0; i < len(host); i++ {
		c := host[i]
		if c >= utf8.RuneSelf {
			if a, err := idna.Lookup.ToASCII(host); err == nil {
				return strings.ToLower(a)
			}
			return strings.ToLower(host)
		}
		lower = lower && (c < 'A' || c > 'Z')
	}
	if lower {
		return host // one pass, the common case: no second one in ToLower
	}
	return strings.ToLower(host)
}

// WithRate paces requests to limit per the given period for each key: they
// leave one after another, per/limit apart, through a leaky_queue (see
// [algorithms.LeakyQueue]); a request that would wait longer than the
// maximum wait ([WithMaxWait]) fails at once with a [*WaitError]. Without
// WithRate the Transport does not pace (it still backs off and, unless
// turned off, honours the server's RateLimit headers).
//
// For example WithRate(5, time.Second) sends one request every 200ms at
// most to each host: a third-party API limited to 5 per second sees a queue
// rather than a burst. A server that counts exactly limit per period with a
// token or leaky bucket, a fixed window or sliding buckets admits every one
// of them. One that counts a request exactly a period old (a sliding log)
// or estimates the previous window (a sliding window counter) refuses a few
// at exactly that rate: leave such a server a margin, say 4 per second
// against its 5 (the refused ones are retried anyway).
func WithRate(limit int64, per time.Duration) Option {
	return func(c *config) error {
		if limit < 1 || limit > algorithms.MaxLimit {
			return fmt.Errorf("client: WithRate: limit must be between 1 and %d, got %d", algorithms.MaxLimit, limit)
		}
		if per < algorithms.MinWindow || per > algorithms.MaxWindow {
			return fmt.Errorf("client: WithRate: per must be between %s and %s, got %s", algorithms.MinWindow, algorithms.MaxWindow, per)
		}
		c.limit, c.per = limit, per
		return nil
	}
}

// WithMaxWait sets the longest a request waits, before it is sent, for its
// turn in the queue ([WithRate]) and, separately, for the holds the server
// asked for to pass and for the answer of a probe of a hold cut short (see
// [WithProactive]), all of them together; a request that would wait longer
// fails at once with a [*WaitError] (one waiting for a probe's answer, when
// its maximum wait ends). A retry waits
// for the server's Retry-After under the same bound: one longer than d is
// a give-up, at once (see [Transport.RoundTrip]). The bound on the
// queue runs from when the request took its turn, and it holds when a
// server's refusal (its Retry-After, or else its rate-limit fields) pushes
// the turn back: a queued request whose turn
// would then come more than d after it queued fails as soon as that is
// known, and the requests behind it move up. It bounds all the turns of a
// request together: one whose turn passed while it waited for a hold or a
// probe's answer (see [WithProactive]) takes a new turn, and fails at
// once when that turn would come after what its earlier turns left of d.
// The default is
// [DefaultMaxWait]; 0 sends only requests that can go at once, and d may
// be at most [algorithms.MaxWindow] (24 hours). A backoff between two
// attempts ([WithBackoff]) is no wait the server asked for: d does not
// bound it, the backoff's ceiling does. The request's context bounds
// every wait too.
func WithMaxWait(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 || d > algorithms.MaxWindow {
			return fmt.Errorf("client: WithMaxWait: max wait must be between 0 and %s, got %s", algorithms.MaxWindow, d)
		}
		c.maxWait = d
		return nil
	}
}

// WithKey sets the pacing key of a request; the default is [HostKey]. Each
// key has its own queue and its own holds. A key of "" exempts the request
// from pacing and holds (it is still retried). key must be safe for
// concurrent use.
//
// A server that counts its quota per credential (an API key, a token, an
// account), not per client address, wants the credential in the key: with
// HostKey, one Transport calling a host with several credentials holds
// the requests of all of them when one credential's quota is spent (a
// 429's Retry-After, a RateLimit field at 0). A key such as the host and
// a hash of the Authorization header gives each credential its queue and
// its holds; the server's RateLimit partition keys are not read for it.
func WithKey(key func(*http.Request) string) Option {
	return func(c *config) error {
		if key == nil {
			return errors.New("client: WithKey: key function is nil")
		}
		c.key = key
		return nil
	}
}

// WithStore keeps the pacing queues in store instead of a private in-memory
// store, so that several processes sharing a Redis store pace together: a
// fleet of instances calling one third-party API then stays within its limit
// as a whole. The store's clock, not the Transport's, decides the queue.
//
// Build every Transport that shares a store with the same [WithRate] and
// [WithMaxWait]: a store keeps a queue per key and Spec (see
// [Transport.Spec]), and the maximum wait is the Spec's MaxDelay, so two
// Transports whose Specs differ, even only in the maximum wait, keep
// separate queues and each sends at the full rate.
func WithStore(store algorithms.Store) Option {
	return func(c *config) error {
		if nilness.Is(store) {
			return errors.New("client: WithStore: store is nil")
		}
		c.store = store
		return nil
	}
}

// WithClock sets the clock the Transport reads and waits on; the default is
// [SystemClock]. The private in-memory store reads it too.
func WithClock(clock Clock) Option {
	return func(c *config) error {
		if nilness.Is(clock) {
			return errors.New("client: WithClock: clock is nil")
		}
		c.clock = clock
		return nil
	}
}

// WithRetries sets how many times a request answered with 429, 503 or 529 (or a
// rate-limited 403: see [Transport.RoundTrip]) is sent again, from 0 to
// 100; the default is [DefaultRetries], and 0 turns retrying off. A
// refusal whose rate-limit fields say the request costs more than the
// server's quota is not retried at all: no wait would let it in (see
// [HeaderXRateLimitIncrement]).
func WithRetries(n int) Option {
	return func(c *config) error {
		if n < 0 || n > 100 {
			return fmt.Errorf("client: WithRetries: retries must be between 0 and 100, got %d", n)
		}
		c.retries = n
		return nil
	}
}

// WithBackoff sets the exponential backoff used when a 429, 503 or 529 response
// (or a rate-limited 403) has no usable Retry-After (none, a malformed one,
// or one that asks for no wait: 0, or a date not after now, which a retry
// sent at once would most likely meet again): before retry k (k = 1,
// 2, ...) the Transport waits a uniformly random time between 0 and
// min(ceiling, base·2^(k−1)) ("full jitter", so that clients turned away
// together do not return together), or, with proactive pacing, until the
// reset the response's rate-limit fields announce when that comes later
// (see [WithProactive]). The defaults are [DefaultBackoffBase] and
// [DefaultBackoffMax].
func WithBackoff(base, ceiling time.Duration) Option {
	return func(c *config) error {
		if base <= 0 {
			return fmt.Errorf("client: WithBackoff: base must be positive, got %s", base)
		}
		if ceiling < base {
			return fmt.Errorf("client: WithBackoff: ceiling %s must be at least base %s", ceiling, base)
		}
		c.base, c.ceiling = base, ceiling
		return nil
	}
}

// WithMaxRetryAfter sets the longest wait a server may ask for that the
// Transport honours; the default is [DefaultMaxRetryAfter]. A 429, 503 or 529 (or
// a 403 refusing the request for its rate, see [Transport.RoundTrip])
// whose Retry-After asks for more is not retried: the Transport gives up at
// once (waiting less would only earn another refusal); so does one that
// asks for more than the maximum wait ([WithMaxWait]), and, with proactive
// pacing (see [WithProactive]; without, the rate-limit fields time no
// retry), one whose rate-limit fields announce a reset further away, when
// no Retry-After of it asks for a wait. The maximum guards against a bogus or hostile value: it
// is the longest the Transport trusts a server's wait, and the holds other
// requests wait for (see [WithProactive]) are cut to it. A cut hold does
// not end in a burst of requests the server said it would refuse: once it
// has passed, while the wait the server announced has not, one request of
// the key at a time goes out, a probe, and the others wait for its answer
// (see [WithProactive]). A maximum of 0 honours no wait: no request is
// held, none waits for a probe, and every request is sent (and given up on
// at once when refused for any wait).
func WithMaxRetryAfter(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return fmt.Errorf("client: WithMaxRetryAfter: max must not be negative, got %s", d)
		}
		c.maxRetryAfter = d
		return nil
	}
}

// WithRetryMethods lets requests with these methods be retried too (for
// example "POST" for an API whose POSTs are idempotent). By default only the
// idempotent methods GET, HEAD, OPTIONS, TRACE, PUT and DELETE are retried,
// and requests of any method carrying an Idempotency-Key or
// X-Idempotency-Key header (its name in any case). In every case the body
// must be replayable: nil, http.NoBody, or with GetBody set
// (http.NewRequest sets it for the common body types). Methods are
// case-sensitive: a lowercase spelling of a standard method ("post") is
// refused, as is anything not a token.
func WithRetryMethods(methods ...string) Option {
	return func(c *config) error {
		if c.methods == nil {
			c.methods = map[string]bool{}
		}
		for _, m := range methods {
			if !isToken(m) {
				return fmt.Errorf("client: WithRetryMethods: invalid method %q (a method is a token: letters, digits and !#$%%&'*+-.^_`|~)", m)
			}
			if u := strings.ToUpper(m); u != m && standardMethod(u) {
				// Methods are case-sensitive: "post" would never match
				// a POST request.
				return fmt.Errorf("client: WithRetryMethods: method %q is not %q: methods are case-sensitive", m, u)
			}
			c.methods[m] = true
		}
		return nil
	}
}

// isToken reports whether s is an HTTP token (RFC 9110, section 5.6.2), as
// a method is.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0:
		default:
			return false
		}
	}
	return true
}

// standardMethod reports whether m is one of the methods of RFC 9110 and
// RFC 5789 (PATCH).
func standardMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// WithGiveUpError makes the Transport return a [*RetryError] (with a nil
// response, its body drained and closed) when it gives up on a request the
// server answered with 429, 503 or 529 (or a rate-limited 403: see
// [Transport.RoundTrip]), instead of returning that last response
// with a nil error. The default, returning the response, is what the
// http.RoundTripper contract asks for and what http.Client users expect; the
// error form suits callers that treat "still throttled" as a failure.
func WithGiveUpError() Option {
	return func(c *config) error {
		c.giveUpError = true
		return nil
	}
}

// WithProactive turns proactive pacing on or off (it is on by default). When
// on, the Transport reads the rate-limit headers of every response — the
// IETF RateLimit and RateLimit-Policy fields (draft -08 to -11, draft-7,
// draft-6), the legacy X-RateLimit-Remaining and X-RateLimit-Reset (and
// Discord's X-RateLimit-Reset-After, seconds from the response: the later
// of the two resets counts), the X API's X-Rate-Limit-Remaining and
// X-Rate-Limit-Reset, OpenAI's
// x-ratelimit-remaining-requests and x-ratelimit-reset-requests, and
// Anthropic's anthropic-ratelimit-requests-remaining and
// anthropic-ratelimit-requests-reset — and Retry-After on 429, 503, 529 and a
// rate-limited 403 (see [Transport.RoundTrip])
// (retry-after-ms, then x-ms-retry-after-ms, then Retry-After, then
// bucket4j's X-Rate-Limit-Retry-After-Seconds: the first valid one that
// asks for a wait, one asking for none giving way to the next), each field over all its lines (see the package doc). When the server says no quota is left, further
// requests with the same key are held until the reset it announced has
// passed, instead of being sent to earn a 429. Retry-After takes precedence
// over the rate-limit fields, as the RateLimit draft asks, but for one
// that asks for no wait (0, a date not after now): that is no usable one
// (see [WithBackoff]), and the fields hold the key and bound the retry's
// backoff as without it; among those
// fields every dialect present counts, and the longest hold wins (each may
// describe a different limit). The rate-limit fields of a
// cached response (Age > 0) are ignored; a legacy X-RateLimit-Reset (or
// X-Rate-Limit-Reset) from 10^9 on is read as a Unix time (in milliseconds
// from 10^12 on; from 10^15 on, past the year 33658, as no time at all:
// ignored), below as seconds, as is a reset of the IETF fields
// (RateLimit-Reset, draft-7's reset, t), which the drafts write in
// delay-seconds but some servers fill with a Unix time, and one that is
// an HTTP-date or an RFC 3339
// time as that instant, and one in ISO 8601 to the minute, Jira Cloud's
// "2021-05-27T05:11Z", as the end of that minute (the reset falls within
// it). OpenAI and Anthropic announce when the
// request quota is back in full, and refill it continuously: with their
// limit field (x-ratelimit-limit-requests,
// anthropic-ratelimit-requests-limit), the hold is one request's share of
// that time, reset/limit; without it, the whole reset. Their token quotas
// are not read: the Transport cannot know how many tokens the next request
// needs, and the 429 it may earn carries a Retry-After. A malformed header
// is ignored. Absolute times (an HTTP-date Retry-After, a Unix-time,
// HTTP-date, RFC 3339 or ISO 8601 reset) are in the server's clock: when the
// response's Date shows the local clock more than a second behind it, or
// three seconds or more ahead, the wait is counted from that Date instead
// of the local clock;
// from the Date line (or the local clock) that makes the wait longest when
// several Date lines disagree.
// Holds only grow: a response announcing a reset earlier than the one its
// key is held for leaves the hold as it is, since the responses to
// concurrent requests arrive in any order and the later reset is the one
// that earns no refusal.
//
// A hold delays the requests that have not yet taken their turn in the
// queue ([WithRate]). Those already waiting for theirs keep it when the hold
// comes from the rate-limit fields of a response that was no refusal (a
// hint, most often in whole seconds, often longer than the server needs: a
// client paced at the server's rate meets "no quota left" on most
// responses); when it comes from a refusal (the server refused a request
// and asked for nothing before then: its Retry-After, or else the reset
// its rate-limit fields announce, which its retry waits for too), the
// turns that come during
// the hold are lost, but the requests keep their order: those that had them
// take the first turns after the hold, the requests behind them each move
// back, and the last take new turns at the end of the queue, so the server
// sees nothing during its hold and no burst after it, and a request that
// arrives during the hold goes after all of them. The requests that arrive
// during a hold, of either kind, take their turns once it has passed in the
// order they arrived. Only the Transport that
// received the refusal holds its queue: the other Transports sharing its store
// ([WithStore]) go on sending, and the requests of each keep their order
// among the turns the store gave it. A request that meets a 429 anyway is
// retried as usual, with a new turn; when its retry waits for the hold
// that 429 brought, it takes that turn before the requests that arrived
// during the hold, as it came before them. The reset a server
// announces is most often in whole seconds, so a hold may last up to a
// second longer than the server needs.
//
// No hold lasts longer than [WithMaxRetryAfter]: a longer wait the server
// asks for (a Retry-After, or a reset, further away) is cut to that
// maximum (with a maximum of 0, no hold is kept, and what follows does not
// apply). Once the cut hold has passed, while the server's own end has
// not, the key is half open: one request goes out, the probe, and each of
// the others of the key, whether it arrived during the hold or after, or
// waited in the queue, waits for the probe's answer when it would leave,
// the wait counting against its maximum wait ([WithMaxWait]) with its
// waits for holds; one that cannot wait (that maximum spent) or whose
// maximum wait ends before the answer fails with a held [*WaitError],
// unsent (a retry gives up). The requests waiting for the probe's answer
// wait in the order they arrived at the Transport (a retry in the place of
// its request), whenever each came to wait. When the probe is answered
// with another wait beyond [WithMaxRetryAfter], the hold is renewed, cut
// again, and the requests waiting wait for it as for any hold (those for
// which it is too long give up); the first of them, the one that arrived
// first, is the next probe, and goes when the hold has passed (one that
// cannot wait for it hands the role on as below); when its answer asks for
// no wait beyond that maximum (a success without rate-limit fields, say,
// or a refusal with a shorter Retry-After), the key is no longer half open
// and the requests waiting go on, after the hold that answer set, if any;
// with pacing ([WithRate]), those whose turns passed while they waited take
// new turns, so that they do not all leave at the instant the answer comes,
// and keep their places: each takes the turn of the first request queued
// that arrived after it, and the requests so passed each move back a turn
// (the last take new turns), as after a Retry-After. The requests an
// answer holds (it set a hold of its own, a refusal's Retry-After within
// the maximum, say) wait for that hold in the order they arrived, and take
// their turns in that order. Without pacing too, while a key is cut, the
// requests that wait for a hold keep their arrival order: when it ends,
// they take their roles in that order, so that the next probe, after a
// cut hold that no probe's answer set (the first, or one set by the answer
// to a request sent before the cut), is the first of them to arrive. A
// retry that waits for a hold, paced or cut, takes its request's place
// among the requests that wait for it, ahead of those that arrived after
// its request, even those waiting already (as among the requests waiting
// for a probe's answer): its request came first, and placed last each
// time it is refused, it could be passed again and again; a request
// already on its way, its wait over, goes first all the same. A refusal
// that says nothing of how long (a 429, 503 or 529 with neither a
// Retry-After asking for a wait, nor rate-limit fields that hold the key)
// lifts nothing of the server's wait: the probe keeps its role, its
// retry goes as the probe, and the others wait on. A probe that ends
// without an answer (its context ends, its RoundTripper fails or panics),
// or gives up after such a refusal, hands its role to the first request
// waiting for it (or to the next to come), which goes as the probe at once
// (with pacing, at a new turn when its own passed while it waited: the
// probe it follows may have just left), or, when a hold set meanwhile is in
// force, once that hold has passed (it waits for it as for any hold, and
// one that cannot hands the role on).
// The Transport remembers at most 16384 keys so cut that nothing waits
// on (no probe out, no hold in force, nor one that ended within twice the
// maximum wait, [WithMaxWait]: the requests asleep on a hold take their
// roles once it has ended, after their turns when paced): a server
// chooses how long its key stays cut, and a Transport may call hosts it
// does not choose. Beyond,
// such keys are forgotten, and a key forgotten goes on as one never cut
// until its next refusal cuts it again.
// Until the server's own end has passed, a queued request whose turn comes
// during a hold from rate-limit fields does not keep it, as it otherwise
// would: the server said no for longer, and the request waits for the hold
// to pass, within its maximum wait, and takes a new turn. Once that end has
// passed, every request goes on.
//
// With proactive pacing off, no request waits for a server's hold, and the
// rate-limit fields time no retry (they neither put off its backoff nor
// make a reset beyond [WithMaxRetryAfter] a give-up; they still tell a
// 403 refused for its rate, and a request that never fits, see
// [Transport.RoundTrip]); a refused request is still retried, after its
// own Retry-After or else the backoff ([WithRetries] turns retrying off),
// and a request that leaves the queue ([WithRate]) because its context ended
// moves nobody up: its turn goes back to the store, which takes it only
// when no request queued there behind it, and the requests behind keep
// their turns (see [Transport]).
func WithProactive(on bool) Option {
	return func(c *config) error {
		c.proactive = on
		return nil
	}
}

// A Retry describes a retry the Transport is about to make.
type Retry struct {
	// Request is the request being retried (the caller's).
	Request *http.Request
	// Attempt is the number of the attempt that failed (1 for the first).
	Attempt int
	// Status is the status code of the response that asked for the retry.
	Status int
	// Wait is how long the Transport waits before the next attempt: with
	// proactive pacing, at least until the hold its key is under ends (see
	// [WithProactive]), which another response may have set longer than
	// this one asked.
	Wait time.Duration
	// RetryAfter reports whether Wait came from the server's Retry-After,
	// or its retry-after-ms, x-ms-retry-after-ms or
	// X-Rate-Limit-Retry-After-Seconds (otherwise it is a
	// backoff wait, or the reset the response's rate-limit fields announce
	// when that comes later: see [WithBackoff]).
	RetryAfter bool
}

// WithOnRetry sets a function told of every retry before its wait, for logs
// and metrics. It must be safe for concurrent use and should not block.
func WithOnRetry(onRetry func(Retry)) Option {
	return func(c *config) error {
		if onRetry == nil {
			return errors.New("client: WithOnRetry: function is nil")
		}
		c.onRetry = onRetry
		return nil
	}
}

// WithRandom sets the source of the backoff jitter; by default the Transport
// draws from math/rand/v2's global generator. Tests pass a seeded source for
// repeatable waits. The Transport serialises its calls to src.
func WithRandom(src rand.Source) Option {
	return func(c *config) error {
		if nilness.Is(src) {
			return errors.New("client: WithRandom: source is nil")
		}
		c.src = src
		return nil
	}
}
