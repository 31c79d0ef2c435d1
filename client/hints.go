package client

import (
	"iter"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Header names the Transport reads.
const (
	// HeaderRetryAfter is RFC 9110's Retry-After: delay-seconds or an
	// HTTP-date. A decimal number of seconds ("1.5"), which RFC 9110 does
	// not allow but some servers send, is read as that wait, rounded up to
	// the nanosecond, as retry-after-ms is.
	HeaderRetryAfter = "Retry-After"
	// HeaderRateLimit is the IETF RateLimit field: a List of named policies
	// with r and t (draft -08 to -11) or draft-7's limit/remaining/reset
	// Dictionary. A field that mixes the two (a line of each, written by two
	// layers) is read member by member, each in the syntax it parses in,
	// the longer hold of the two counting; one with a member that is
	// neither, or longer than 64 KiB, its lines joined, is ignored. A
	// reset (t, or draft-7's reset) is delay-seconds, but one of 10^9 or
	// more is read as a Unix time, as [HeaderRateLimitReset] is.
	HeaderRateLimit = "RateLimit"
	// HeaderRateLimitPolicy is the IETF RateLimit-Policy field; its w
	// stands in for a missing t (the longest w of the policies of that
	// name, when several share it). A w is a window's length, not an
	// instant: always seconds, however large. A field longer than 64 KiB
	// is ignored.
	HeaderRateLimitPolicy = "RateLimit-Policy"
	// HeaderRateLimitRemaining is draft-6's RateLimit-Remaining, an
	// Integer Item. In several lines (or several members in a line) no
	// quota is left when any valid one says 0.
	HeaderRateLimitRemaining = "RateLimit-Remaining"
	// HeaderRateLimitReset is draft-6's RateLimit-Reset, in delay-seconds,
	// an Integer Item as RateLimit-Remaining. In several lines (or several
	// members in a line) the latest valid one counts. A value of 10^9 or
	// more (31 years and more), no wait a server means, is read as a Unix
	// time, as [HeaderXRateLimitReset] is: in seconds, in milliseconds
	// from 10^12 on, in the server's clock; some servers send the legacy
	// field's Unix time in the IETF ones.
	HeaderRateLimitReset = "RateLimit-Reset"
	// HeaderXRateLimitRemaining is the legacy X-RateLimit-Remaining: a
	// count of whole requests, or a decimal (Reddit's "599.0"), below one
	// whole request ("0.0") meaning none left.
	HeaderXRateLimitRemaining = "X-RateLimit-Remaining"
	// HeaderXRateLimitReset is the legacy X-RateLimit-Reset: delay-seconds,
	// a Unix time in seconds or milliseconds (GitHub: Unix seconds), or an
	// instant as an HTTP-date (sethvargo/go-limiter), in RFC 3339, or in
	// ISO 8601 to the minute (Jira Cloud: "2021-05-27T05:11Z"), read as the
	// end of that minute, since the reset falls within it.
	HeaderXRateLimitReset = "X-RateLimit-Reset"
	// HeaderXRateLimitResetAfter is Discord's X-RateLimit-Reset-After: the
	// seconds, with an optional fraction ("64.57"), until the limit of
	// X-RateLimit-Remaining resets. It is relative, so no clock skew bends
	// it; beside an X-RateLimit-Reset the later of the two counts. It is
	// only ever a wait: a value of 10^9 or more is no Unix time, but a
	// wait beyond every cap.
	HeaderXRateLimitResetAfter = "X-RateLimit-Reset-After"
	// HeaderXRateLimitLimit is the legacy X-RateLimit-Limit, the quota of
	// a window. It is read only with [HeaderXRateLimitIncrement].
	HeaderXRateLimitLimit = "X-RateLimit-Limit"
	// HeaderXRateLimitIncrement is go-chi/httprate's X-RateLimit-Increment:
	// the units the request costs (sent when more than 1). A refusal whose
	// increment exceeds its X-RateLimit-Limit can never be admitted, and
	// is not retried (see [Transport.RoundTrip]).
	HeaderXRateLimitIncrement = "X-RateLimit-Increment"
	// HeaderXRateLimitRemainingDashed is X-Rate-Limit-Remaining, the X
	// (Twitter) API's spelling of X-RateLimit-Remaining.
	HeaderXRateLimitRemainingDashed = "x-rate-limit-remaining"
	// HeaderXRateLimitResetDashed is X-Rate-Limit-Reset, read as
	// X-RateLimit-Reset is (the X API sends a Unix time in seconds). It
	// pairs with X-Rate-Limit-Remaining only.
	HeaderXRateLimitResetDashed = "x-rate-limit-reset"
	// HeaderRetryAfterMs is retry-after-ms (Azure, OpenAI): the wait in
	// milliseconds, digits with an optional fraction. It is read before
	// Retry-After, and stands for it wherever Retry-After is named; one
	// that asks for no wait (0) gives way to a later form that asks for
	// one.
	HeaderRetryAfterMs = "retry-after-ms"
	// HeaderXMsRetryAfterMs is x-ms-retry-after-ms (Azure), as
	// retry-after-ms; it is read after it and before Retry-After.
	HeaderXMsRetryAfterMs = "x-ms-retry-after-ms"
	// HeaderXRateLimitRetryAfterSeconds is
	// X-Rate-Limit-Retry-After-Seconds, which bucket4j-spring-boot-starter
	// (and the APIs built on it, such as OpenSky's) sends on a refusal:
	// the wait in seconds, written as TimeUnit.NANOSECONDS.toSeconds of it,
	// whole seconds cut down ("4" for a wait of 4 to 5 seconds, "0" for
	// one under a second). It is read, when no other form of Retry-After
	// asks for a wait, as a Retry-After to the end of the second it names (4 as 5
	// seconds; a fraction, which bucket4j does not write, to the end of its
	// whole second too), so that the retry never comes early, and stands
	// for Retry-After wherever that is named.
	HeaderXRateLimitRetryAfterSeconds = "X-Rate-Limit-Retry-After-Seconds"
	// HeaderOpenAIRemainingRequests is OpenAI's
	// x-ratelimit-remaining-requests.
	HeaderOpenAIRemainingRequests = "x-ratelimit-remaining-requests"
	// HeaderOpenAIResetRequests is OpenAI's x-ratelimit-reset-requests: a
	// Go duration ("20ms", "1s", "6m0s", "8.64s", ".5s"; any non-negative
	// one time.ParseDuration reads) until the request quota is back in
	// full; a bare number is seconds (as some Azure OpenAI deployments
	// send).
	HeaderOpenAIResetRequests = "x-ratelimit-reset-requests"
	// HeaderOpenAILimitRequests is OpenAI's x-ratelimit-limit-requests,
	// the size of the request quota.
	HeaderOpenAILimitRequests = "x-ratelimit-limit-requests"
	// HeaderAnthropicRequestsRemaining is Anthropic's
	// anthropic-ratelimit-requests-remaining.
	HeaderAnthropicRequestsRemaining = "anthropic-ratelimit-requests-remaining"
	// HeaderAnthropicRequestsReset is Anthropic's
	// anthropic-ratelimit-requests-reset: the RFC 3339 instant at which the
	// request quota is back in full.
	HeaderAnthropicRequestsReset = "anthropic-ratelimit-requests-reset"
	// HeaderAnthropicRequestsLimit is Anthropic's
	// anthropic-ratelimit-requests-limit, the size of the request quota.
	HeaderAnthropicRequestsLimit = "anthropic-ratelimit-requests-limit"
)

// The header names in canonical form, to index http.Header directly:
// Header.Get would canonicalise (and allocate) "RateLimit" on every call.
var (
	canonRetryAfter         = http.CanonicalHeaderKey(HeaderRetryAfter)
	canonRateLimit          = http.CanonicalHeaderKey(HeaderRateLimit)
	canonRateLimitPolicy    = http.CanonicalHeaderKey(HeaderRateLimitPolicy)
	canonRateLimitRemaining = http.CanonicalHeaderKey(HeaderRateLimitRemaining)
	canonRateLimitReset     = http.CanonicalHeaderKey(HeaderRateLimitReset)
	canonXRemaining         = http.CanonicalHeaderKey(HeaderXRateLimitRemaining)
	canonXReset             = http.CanonicalHeaderKey(HeaderXRateLimitReset)
	canonXResetAfter        = http.CanonicalHeaderKey(HeaderXRateLimitResetAfter)
	canonXLimit             = http.CanonicalHeaderKey(HeaderXRateLimitLimit)
	canonXIncrement         = http.CanonicalHeaderKey(HeaderXRateLimitIncrement)
	canonXDashRemaining     = http.CanonicalHeaderKey(HeaderXRateLimitRemainingDashed)
	canonXDashReset         = http.CanonicalHeaderKey(HeaderXRateLimitResetDashed)
	canonRetryAfterMs       = http.CanonicalHeaderKey(HeaderRetryAfterMs)
	canonXMsRetryAfterMs    = http.CanonicalHeaderKey(HeaderXMsRetryAfterMs)
	canonXRetryAfterSeconds = http.CanonicalHeaderKey(HeaderXRateLimitRetryAfterSeconds)
	canonOpenAIRemaining    = http.CanonicalHeaderKey(HeaderOpenAIRemainingRequests)
	canonOpenAIReset        = http.CanonicalHeaderKey(HeaderOpenAIResetRequests)
	canonOpenAILimit        = http.CanonicalHeaderKey(HeaderOpenAILimitRequests)
	canonAnthropicRemaining = http.CanonicalHeaderKey(HeaderAnthropicRequestsRemaining)
	canonAnthropicReset     = http.CanonicalHeaderKey(HeaderAnthropicRequestsReset)
	canonAnthropicLimit     = http.CanonicalHeaderKey(HeaderAnthropicRequestsLimit)
)

// maxSFField is the longest RateLimit or RateLimit-Policy field, its lines
// joined, that is parsed; a longer one is ignored. Parsing costs some 70
// bytes of memory for each member or parameter, and the server chooses how
// many it sends: net/http accepts 10 MB of header. 64 KiB holds a thousand
// policies (the List size RFC 9651 asks parsers to support) with room to
// spare.
const maxSFField = 64 << 10

// maxHint bounds every wait read from a header before it becomes a
// Duration, so that no value can overflow; the Transport's own caps are far
// smaller.
const maxHint = 365 * 24 * time.Hour

// holds keeps, per key, the instant until which the server asked us not to
// send. It is safe for concurrent use.
type holds struct {
	mu      sync.Mutex
	m       map[string]time.Time
	sweepAt int
}

// remaining returns how long key is still held at now (0 when it is not).
func (h *holds) remaining(key string, now time.Time) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	until, ok := h.m[key]
	if !ok {
		return 0
	}
	d := until.Sub(now)
	if d <= 0 {
		delete(h.m, key)
		return 0
	}
	return d
}

// remainingNow returns how long key is still held, as remaining does, and
// the instant it read clock at to tell; it reads clock only when key is
// held, and returns 0 and the zero Time when it is not: a request that
// meets no hold needs no instant.
func (h *holds) remainingNow(key string, clock Clock) (time.Duration, time.Time) {
	h.mu.Lock()
	_, ok := h.m[key]
	h.mu.Unlock()
	if !ok {
		return 0, time.Time{}
	}
	now := clock.Now()
	return h.remaining(key, now), now
}

// extend holds key until until, unless it is already held longer, and
// returns the end of its hold. Expired holds are swept each time the map
// doubles, so it stays as small as the set of keys currently held.
func (h *holds) extend(key string, until, now time.Time) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	if cur, ok := h.m[key]; ok && !until.After(cur) {
		return cur
	}
	h.m[key] = until
	if len(h.m) >= h.sweepAt {
		for k, u := range h.m {
			if !u.After(now) {
				delete(h.m, k)
			}
		}
		h.sweepAt = max(64, 2*len(h.m))
	}
	return until
}

// observe records what a response says about key's quota: the Retry-After
// of a 429, 503 or 529 (ra, when hasRA), which takes precedence as the RateLimit
// draft asks, or else a RateLimit header announcing that no quota is left.
// A Retry-After that asks for no wait (0, a date not after now) is no
// usable one (see [WithBackoff]): the rate-limit fields say how long then.
// The hold is cut to maxRetryAfter; when it is cut short, the end the
// server announced is recorded (see [cuts]), and observe reports true. A
// maxRetryAfter of 0 honours no wait: nothing is held, nor cut. The hold
// of a refusal (refusal: a status RoundTrip backs off from), from its
// Retry-After or else from its rate-limit fields, holds the requests
// already queued too (t.firm); that of a success's fields, a hint, only
// those not yet queued.
func (t *Transport) observe(key string, h http.Header, now time.Time, ra time.Duration, hasRA, refusal bool) (short bool) {
	fromRA := hasRA && ra > 0
	d := ra
	if !fromRA {
		d = serverHold(h, now)
	}
	server := d
	if d > t.maxRetryAfter {
		short = t.maxRetryAfter > 0
		d = t.maxRetryAfter
	}
	if d <= 0 {
		return false
	}
	// The hold first: the cut's record keeps its end (see cuts.extend).
	end := t.holds.extend(key, now.Add(d), now)
	switch {
	case short:
		t.cuts.extend(key, now.Add(server), end, now, &t.holds)
	case t.cuts.n.Load() != 0:
		t.cuts.heldUntil(key, end)
	}
	if fromRA || refusal {
		t.firm.extend(key, now.Add(d), now)
	}
	t.gate.held(key)
	return short
}

// parseRetryAfter reads the server's Retry-After: retry-after-ms, else
// x-ms-retry-after-ms (milliseconds, the most precise first, as the Azure
// and OpenAI SDKs read them), else the Retry-After field (RFC 9110
// §10.2.3): delay-seconds, or an HTTP-date taken relative to now (a date in
// the past is a wait of 0). Every form reads a number alike (see decimal):
// digits with an optional fraction, the Retry-After's in seconds (a
// decimal is not delay-seconds, but its meaning is plain, and the backoff
// that would replace it may be shorter: the OpenAI and Anthropic SDKs read
// it so too), a part of a nanosecond rounded up and a wait beyond maxHint
// saturated; a sign, an exponent, a unit or NaN is malformed. A missing or
// malformed field is skipped, and so is one that asks for no wait (0, a
// date not after now) when a later form asks for one: no wait is no usable
// Retry-After (see [WithBackoff]), and the forms may come from different
// layers (a gateway writing "retry-after-ms: 0" on every response, the
// application behind it its own Retry-After). It returns the first form
// that asks for a wait; else 0, reporting whether any form was valid. A
// field in several lines is the longest wait of its valid lines (see
// longest), and a millisecond field the longest of its valid members; a
// Retry-After line is split at its commas only when it is not one value,
// and never in an HTTP-date (see retryAfterValues). Last comes bucket4j's
// X-Rate-Limit-Retry-After-Seconds, the longest of its valid members, each
// to the end of the whole second it names (see
// HeaderXRateLimitRetryAfterSeconds).
func parseRetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	valid := false // a form was valid, and asked for no wait
	for _, key := range [...]string{canonRetryAfterMs, canonXMsRetryAfterMs} {
		d, ok := longest(numbers(h[key]), func(v string) (time.Duration, bool) {
			return decimal(strings.TrimSpace(v), time.Millisecond)
		})
		if ok && d > 0 {
			return d, true
		}
		valid = valid || ok
	}
	var server time.Time // serverNow, read once for all the lines
	read := false
	d, ok := longest(retryAfterValues(h[canonRetryAfter]), func(v string) (time.Duration, bool) {
		if d, ok := decimal(v, time.Second); ok {
			return d, true
		}
		at, err := http.ParseTime(v)
		if err != nil {
			return 0, false
		}
		if !read {
			server, read = serverNow(h, now), true
		}
		return clampHint(at.Sub(server)), true
	})
	if ok && d > 0 {
		return d, true
	}
	valid = valid || ok
	d, ok = longest(numbers(h[canonXRetryAfterSeconds]), func(v string) (time.Duration, bool) {
		d, ok := decimal(strings.TrimSpace(v), time.Second)
		if !ok {
			return 0, false
		}
		// The end of the whole second: d <= maxHint, so no overflow.
		return min((d/time.Second+1)*time.Second, maxHint), true
	})
	if ok { // never 0: the end of a second
		return d, true
	}
	return 0, valid
}

// retryAfterValues yields the values of Retry-After's lines, trimmed: a
// line that is one number with thousands separators as that number (see
// grouped); a line without a comma, or that is an HTTP-date, whole; and
// any other line member by member (see retryAfterMembers), as a proxy
// that joined lines with commas (RFC 9110 §5.3) left them.
func retryAfterValues(lines []string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, line := range lines {
			line = strings.TrimSpace(line)
			if n, ok := grouped(line); ok {
				line = n
			} else if strings.Contains(line, ",") && !isHTTPDate(line) {
				if !retryAfterMembers(line, yield) {
					return
				}
				continue
			}
			if !yield(line) {
				return
			}
		}
	}
}

// minDateLen is the length of the shortest HTTP-date, in asctime form
// ("Sun Nov  6 08:49:37 1994"); the IMF-fixdate and RFC 850 forms, which
// hold a comma, are longer.
const minDateLen = len("Sun Nov  6 08:49:37 1994")

// retryAfterMembers yields the members of a Retry-After line that a proxy
// joined from several, trimmed, and reports false when yield does: each
// comma-separated member, but for an HTTP-date's own comma, after its day
// name: a word followed by the next member that together make an
// HTTP-date are read as one. Only the members that may be a value (a
// number, or as long as an HTTP-date) are yielded, so that a line of many
// short invalid members costs no date parsing.
func retryAfterMembers(line string, yield func(string) bool) bool {
	for rest, more := line, true; more; {
		var m string
		m, rest, more = strings.Cut(rest, ",")
		if word := strings.TrimSpace(m); more && len(word) >= 3 && isAlphaWord(word) {
			// A day name, perhaps: the date goes on after the comma.
			next, after, nextMore := strings.Cut(rest, ",")
			if next = strings.TrimSpace(next); len(word)+2+len(next) > minDateLen {
				if pair := word + ", " + next; isHTTPDate(pair) {
					m, rest, more = pair, after, nextMore
				}
			}
		}
		if m = strings.TrimSpace(m); (isNumber(m) || len(m) >= minDateLen) && !yield(m) {
			return false
		}
	}
	return true
}

// isAlphaWord reports whether s is ASCII letters only.
func isAlphaWord(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isAlpha(s[i]) {
			return false
		}
	}
	return true
}

// isHTTPDate reports whether v is an HTTP-date, in any of its three forms.
func isHTTPDate(v string) bool {
	_, err := http.ParseTime(v)
	return err == nil
}

// A field of one value (not a List) may still come in several lines: a
// gateway and the application behind it may each write their own, or a
// proxy may repeat one. RFC 9110 §5.3 gives such lines no meaning, and each
// may describe a different limit, so they are read as the dialects are
// (see serverHold): cautiously, and each line on its own, skipping the
// invalid ones. A wait or reset is the longest of the lines, a remaining
// count is none when any line says none, and a quota's size is the
// smallest of the lines (the largest share of its reset for one request).
// A proxy may also have joined the lines into one, with commas (RFC 9110
// §5.3), so each comma-separated member of each line is read as a line of
// its own (see members; numbers keeps a count written "1,000" whole), in
// every such field but those whose values may hold a comma: Date (an
// HTTP-date), read line by line, and Retry-After, Anthropic's and the
// legacy resets, split only where the line is no instant (see
// retryAfterValues, anthropicHold, legacyPairHold). So are draft-6's
// Structured Field Integers (see eachSFInt: no thousands separators in
// those); the Lists and Dictionaries (RateLimit, RateLimit-Policy)
// follow RFC 9651 instead, their lines making one field (see sfField).

// members yields each member of a field's lines: each comma-separated part
// of each line, trimmed of spaces and tabs; an empty one is none (RFC 9110
// §5.6.1) and is skipped.
func members(lines []string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, v := range lines {
			for m := range strings.SplitSeq(v, ",") {
				if m = strings.Trim(m, " \t"); m != "" && !yield(m) {
					return
				}
			}
		}
	}
}

// numbers yields the members of the lines of a plain numeric field (a
// count, a reset, a wait), as members does, but for a line that is one
// number written with thousands separators ("1,000", "12,000,000": groups
// of three digits, no space): that is the number, not members "1" and
// "000" (which would read as no quota left). A proxy joining lines writes
// ", ", and no count needs a line of "000". Structured Fields and list
// fields (Age) have no such numbers: they read members.
func numbers(lines []string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for i, v := range lines {
			if n, ok := grouped(strings.Trim(v, " \t")); ok {
				if !yield(n) {
					return
				}
				continue
			}
			for m := range members(lines[i : i+1]) {
				if !yield(m) {
					return
				}
			}
		}
	}
}

// grouped returns v without its commas when v is a number written with
// thousands separators: one to three digits, then groups of a comma and
// three digits.
func grouped(v string) (string, bool) {
	first := strings.IndexByte(v, ',')
	if first < 1 || first > 3 || (len(v)-first)%4 != 0 || !isDigits(v[:first]) {
		return "", false
	}
	for i := first; i < len(v); i += 4 {
		if v[i] != ',' || !isDigits(v[i+1:i+4]) {
			return "", false
		}
	}
	return strings.ReplaceAll(v, ",", ""), true
}

// longest returns the longest wait that parse reads from values, the lines
// or members of a field, and reports false when it reads none.
func longest(values iter.Seq[string], parse func(string) (time.Duration, bool)) (time.Duration, bool) {
	var wait time.Duration
	found := false
	for v := range values {
		if d, ok := parse(v); ok {
			wait, found = max(wait, d), true
		}
	}
	return wait, found
}

// anyZero reports whether any member of the lines of a remaining count
// says none (see isZero).
func anyZero(lines []string) bool {
	for v := range numbers(lines) {
		if isZero(v) {
			return true
		}
	}
	return false
}

// anyBelowOne reports whether any member of the lines of a legacy
// remaining count says none: zero, or a decimal below one whole request.
// Servers write the legacy count as a decimal too (Reddit: "599.0", and
// "0.0" once the quota is spent), which the vendors' dialects (see isZero)
// do not.
func anyBelowOne(lines []string) bool {
	for v := range numbers(lines) {
		v = strings.TrimSpace(v)
		if whole, _, _ := strings.Cut(v, "."); isNumber(v) && strings.TrimLeft(whole, "0") == "" {
			return true
		}
	}
	return false
}

// quota returns the smallest positive integer among the members of the
// lines of a quota's size, or 0 when none is one.
func quota(lines []string) int64 {
	var q int64
	for v := range numbers(lines) {
		v = strings.TrimSpace(v)
		if !isDigits(v) {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err == nil && n > 0 && (q == 0 || n < q) {
			q = n
		}
	}
	return q
}

// neverFits reports whether a refusal's fields say that the request costs
// more than the server's quota can ever hold, so that no wait lets it in:
// go-chi/httprate's X-RateLimit-Increment (the units the request costs)
// above its X-RateLimit-Limit (the quota of a window). It reports so only
// when that is certain: both fields present, each member of each of their
// lines a plain integer (see numbers; an empty one is none), and the
// smallest increment above the largest limit, so that lines written by
// different layers cannot mislead it. A field of any other form (a limit
// with a window, draft-polli-03's "10, 10;w=1") tells nothing, nor do the
// fields of a cached response (see cached). A server that says nothing of
// a request's cost (the IETF fields, draft-6, the vendors' dialects have
// no such field) is never found so: its refusal is retried.
func neverFits(h http.Header) bool {
	cost, _, ok := plainInts(h[canonXIncrement])
	if !ok || cost < 1 {
		return false
	}
	_, limit, ok := plainInts(h[canonXLimit])
	return ok && cost > limit && !cached(h)
}

// plainInts returns the smallest and largest integers among the members of
// lines, and reports false when there are none or when any is not a plain
// non-negative integer. A number too large for an int64 counts as the
// largest int64.
func plainInts(lines []string) (lo, hi int64, ok bool) {
	for v := range numbers(lines) {
		if !isDigits(v) {
			return 0, 0, false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			n = math.MaxInt64 // digits beyond an int64
		}
		if !ok || n < lo {
			lo = n
		}
		if !ok || n > hi {
			hi = n
		}
		ok = true
	}
	return lo, hi, ok
}

// Clock skew: how far the local clock may stray from a response's Date
// before the response's absolute times are counted from Date instead. Date
// has a resolution of one second (the server's instant is in [Date,
// Date+1s)), and a response takes time to arrive: a clock that reads up to
// a second before Date or less than three seconds after it is in step.
const (
	skewBehind = time.Second
	skewAhead  = 3 * time.Second
)

// serverNow returns the instant from which an absolute time that a
// response states in the server's clock (an HTTP-date Retry-After, a Unix
// time reset) is counted: now, unless the response's Date shows the local
// clock out of step with the server's (see skewAhead), in which case its
// Date (plus its Age, for a response from a cache). A client whose clock
// runs ahead would otherwise retry at once into more refusals, and one
// that runs behind would wait for the skew.
// Without a valid Date the local clock is all there is.
//
// Date is a single value, but a response may carry it in several lines (a
// gateway and the server behind it, each with its own clock) that
// disagree. Each valid line is then read as if it were alone, and the
// earliest of the instants they give wins: it makes every wait counted
// from it the longest, and a wait a little long costs less than a retry
// that earns another refusal. Invalid lines are skipped.
func serverNow(h http.Header, now time.Time) time.Time {
	// A response from a cache was made Age seconds ago (RFC 9111 §4.2.3).
	var age time.Duration
	if a := firstMember(h["Age"]); isDigits(a) {
		age = secondsInt(a)
	}
	server, found := now, false // the earliest instant of the valid lines
	for _, v := range h["Date"] {
		date, err := http.ParseTime(v)
		if err != nil {
			continue
		}
		at := date.Add(age)
		if d := now.Sub(at); d >= -skewBehind && d < skewAhead {
			at = now // in step
		}
		if !found || at.Before(server) {
			server, found = at, true
		}
	}
	return server
}

// serverHold returns how long the response's rate-limit headers ask the
// client to hold further requests: the wait until the reset of a policy with
// no quota left, the longest one when several say so; 0 when none does, when
// the headers are malformed or too long (maxSFField), or when the response
// came from a cache (Age > 0: its numbers are stale, and the draft asks
// clients to ignore them). Every dialect present is read (IETF, draft-6,
// X-RateLimit, X-Rate-Limit, Discord's X-RateLimit-Reset-After, OpenAI's and
// Anthropic's request quotas): each may describe a different limit, and a
// request needs quota under all of them.
func serverHold(h http.Header, now time.Time) time.Duration {
	if cached(h) {
		return 0
	}
	return max(ietfHold(h, now), draft6Hold(h, now), legacyHold(h, now), discordHold(h), openAIHold(h), anthropicHold(h, now))
}

// cached reports whether the response's Age field says it came from a
// cache: delta-seconds above 0 (RFC 9111 §5.1). A field of several members
// counts by its first (see firstMember), and an invalid one (not digits) is
// ignored, as that section asks: the response counts as fresh.
func cached(h http.Header) bool {
	age := firstMember(h["Age"])
	return isDigits(age) && strings.TrimLeft(age, "0") != ""
}

// firstMember returns the first member of a list-based field in lines,
// trimmed: empty lines and members are none (RFC 9110 §5.6.1). It returns
// "" when there is none.
func firstMember(lines []string) string {
	for m := range members(lines) {
		return m
	}
	return ""
}

// ietfHold reads the RateLimit field: a List of named policies with r and t
// parameters (draft -08 to -11) or the draft-7 Dictionary (limit, remaining,
// reset). A field that is neither, but whose every member is a List member
// or a Dictionary member (two layers, one writing each draft, each a line
// of the field), is read member by member, each in the syntax it parses in
// (see eachSFMixed), and its hold is the longer of the two drafts': each
// may describe a different limit, and a request needs quota under both.
// A reset (t, or draft-7's reset) is delay-seconds, but from 10^9 on a Unix
// time (see ietfReset).
func ietfHold(h http.Header, now time.Time) time.Duration {
	field, ok := sfField(h[canonRateLimit])
	if !ok {
		return 0
	}
	if !strings.Contains(field, "=0") && !strings.Contains(field, "=-0") {
		return 0 // no member has r=0 or remaining=0: nothing to parse
	}
	// A field that parses as a List is the draft -08 to -11 syntax, whatever
	// its first member: a member not named by a String is invalid and
	// ignored, not a sign of draft-7 (whose Dictionary members, key=value,
	// never parse as a List).
	var hold time.Duration
	var windows map[string]int64 // RateLimit-Policy's w by name, read on demand
	reset := ietfReset{h: h, now: now}
	member := func(m sfMember) {
		it := m.item
		if it.kind != sfString {
			return
		}
		r, ok := it.param("r")
		if !ok || r.kind != sfInteger || r.num != 0 {
			return
		}
		if tp, ok := it.param("t"); ok {
			if tp.kind == sfInteger && tp.num >= 0 {
				hold = max(hold, reset.wait(tp.num))
			}
			return
		}
		// No t: the policy's window is the longest the quota can take to
		// come back.
		if windows == nil {
			windows = policyWindows(h)
		}
		if w, ok := windows[it.str]; ok {
			hold = max(hold, seconds(w))
		}
	}
	if eachSFList(field, member) {
		return hold
	}
	var d7 draft7
	if eachSFDict(field, d7.member) {
		return d7.hold(&reset)
	}
	hold, d7 = 0, draft7{} // what the readers saw of the malformed List and Dictionary
	if !eachSFMixed(field, member, d7.member) {
		return 0
	}
	return max(hold, d7.hold(&reset))
}

// sfField joins the lines of a Structured Field, and reports false when
// there are none or when the field is longer than maxSFField (it is then
// ignored, not parsed).
func sfField(values []string) (string, bool) {
	if len(values) == 0 {
		return "", false
	}
	n := 2 * (len(values) - 1) // the ", " between lines
	for _, v := range values {
		n += len(v)
	}
	if n > maxSFField {
		return "", false
	}
	return strings.Join(values, ", "), true
}

// policyWindows returns the w of each named policy of RateLimit-Policy; of
// several policies of one name (a gateway and the application behind it
// may each write a line, both naming theirs "default"), the longest, as
// the RateLimit member naming them may be either.
func policyWindows(h http.Header) map[string]int64 {
	out := map[string]int64{}
	field, ok := sfField(h[canonRateLimitPolicy])
	if !ok {
		return out
	}
	ok = eachSFList(field, func(m sfMember) {
		if m.item.kind != sfString {
			return
		}
		if w, ok := m.item.param("w"); ok && w.kind == sfInteger && w.num > 0 {
			out[m.item.str] = max(out[m.item.str], w.num)
		}
	})
	if !ok {
		return map[string]int64{}
	}
	return out
}

// draft7 reads the members of a draft-7 RateLimit Dictionary: limit=,
// remaining=, reset=. Its zero value has seen none.
type draft7 struct {
	remaining, reset       int64
	hasRemaining, hasReset bool // the key's last value is a non-negative Integer
}

// member reads m, a member of the Dictionary.
func (d *draft7) member(m sfMember) {
	// The last member of a key is its value (RFC 9651 §4.2.2), even
	// when it is not an Integer: then the key has no usable value.
	v, ok := m.item.num, m.item.kind == sfInteger && m.item.num >= 0
	switch m.key {
	case "remaining":
		d.remaining, d.hasRemaining = v, ok
	case "reset":
		d.reset, d.hasReset = v, ok
	}
}

// hold returns the wait the members read say: reset (read by r) when none
// remains, else 0.
func (d draft7) hold(r *ietfReset) time.Duration {
	if !d.hasRemaining || d.remaining != 0 || !d.hasReset {
		return 0
	}
	return r.wait(d.reset)
}

// ietfReset reads the resets of the IETF fields of one response (draft-6's
// RateLimit-Reset, draft-7's reset, the t of draft -08 to -11): each draft
// writes them in delay-seconds, but a server that mixes them up with the
// legacy X-RateLimit-Reset sends a Unix time there (express-rate-limit's
// legacy headers, httprate and GitHub send one in that field). A value of
// 10^9 or more (31 years and more) is no wait a server means: it is read
// as the legacy field reads it, a Unix time in seconds, in milliseconds
// from 10^12 on, in the server's clock (see resetAt, serverNow); below, as
// delay-seconds.
type ietfReset struct {
	h      http.Header
	now    time.Time
	server time.Time // serverNow, read once for all the members
	read   bool
}

// wait returns the wait until the reset n, n >= 0.
func (r *ietfReset) wait(n int64) time.Duration {
	if n < unixSecondsFrom {
		return seconds(n)
	}
	if !r.read {
		r.server, r.read = serverNow(r.h, r.now), true
	}
	return resetAt(float64(n), r.server)
}

// draft6Hold reads RateLimit-Remaining and RateLimit-Reset (draft-6), each
// an Integer Item, possibly in several lines or in one line of several
// members (see eachSFInt): no quota is left when any member of
// RateLimit-Remaining says 0, and the hold is then the latest of
// RateLimit-Reset's. A reset of 10^9 or more is read as a Unix time, as
// the legacy X-RateLimit-Reset is (see ietfReset).
func draft6Hold(h http.Header, now time.Time) time.Duration {
	none := false
	eachSFInt(h[canonRateLimitRemaining], func(n int64) { none = none || n == 0 })
	if !none {
		return 0
	}
	var hold time.Duration
	reset := ietfReset{h: h, now: now}
	eachSFInt(h[canonRateLimitReset], func(n int64) { hold = max(hold, reset.wait(n)) })
	return hold
}

// eachSFInt calls fn with each valid member of a field of one
// non-negative Integer Item (without parameters) that came in lines. RFC
// 9651 makes a field of several lines a List, which no Item parses as, and
// has the whole field ignored; but the lines may each come from a
// different layer, as for the fields of one plain value (see longest), and
// a proxy may have joined them into one line: each member of each line
// (see members) is read on its own, and an invalid one (not an Integer,
// negative, with parameters) is skipped.
func eachSFInt(lines []string, fn func(int64)) {
	for m := range members(lines) {
		p := sfParser{s: m}
		if it := p.bare(); !p.bad && p.i == len(p.s) && it.kind == sfInteger && it.num >= 0 {
			fn(it.num)
		}
	}
}

// Thresholds of the legacy X-RateLimit-Reset and of the IETF resets (see
// ietfReset): larger values are Unix times (seconds from 2001-09-09 on,
// milliseconds from 2001-09-09 on) rather than delta-seconds, which no
// server sends in the billions.
const (
	unixSecondsFrom = 1_000_000_000
	unixMillisFrom  = 1_000_000_000_000
)

// legacyHold reads X-RateLimit-Remaining and X-RateLimit-Reset, and the X
// API's X-Rate-Limit-Remaining and X-Rate-Limit-Reset, each reset with its
// own remaining; the longer hold of the two.
func legacyHold(h http.Header, now time.Time) time.Duration {
	return max(legacyPairHold(h, now, canonXRemaining, canonXReset),
		legacyPairHold(h, now, canonXDashRemaining, canonXDashReset))
}

// legacyPairHold reads a legacy remaining and reset pair. Reset is
// delta-seconds (possibly with a fraction), or a Unix time in seconds or
// milliseconds (httprate, express-rate-limit, GitHub, the X API), or an
// instant written as an HTTP-date (sethvargo/go-limiter), in RFC 3339 or in
// ISO 8601 to the minute (Jira Cloud; see resetInstant), taken relative to
// now in the server's clock (see serverNow). Each field
// may come in several lines, or members of a line (see numbers; a line
// that is one instant is not split at its commas): the hold is the latest
// reset when any remaining member says none (see anyBelowOne).
func legacyPairHold(h http.Header, now time.Time, remKey, resetKey string) time.Duration {
	if !anyBelowOne(h[remKey]) {
		return 0 // absent, malformed, or a whole request left
	}
	resets := h[resetKey]
	if len(resets) == 0 {
		return 0
	}
	now = serverNow(h, now)
	var hold time.Duration
	for i, line := range resets {
		if at, ok := resetInstant(line); ok {
			hold = max(hold, clampHint(at.Sub(now)))
			continue
		}
		for v := range numbers(resets[i : i+1]) {
			hold = max(hold, legacyReset(strings.TrimSpace(v), now))
		}
	}
	return hold
}

// resetInstant reads line, trimmed, as an HTTP-date (RFC 9110 §5.6.7, in any
// of its three forms), an RFC 3339 time, or an ISO 8601 time to the minute,
// "2021-05-27T05:11Z" (Jira Cloud's yyyy-MM-ddTHH:mmZ, whose reset falls
// within the minute it names: read as that minute's end, never early), and
// reports false when it is none. A line of numbers (digits, points, commas,
// spaces: the common forms) is none, found so without the parsers'
// allocations; no number holds the "T" and ":" of the times.
func resetInstant(line string) (time.Time, bool) {
	line = strings.TrimSpace(line)
	if strings.Trim(line, "0123456789., \t") == "" {
		return time.Time{}, false
	}
	if at, err := http.ParseTime(line); err == nil {
		return at, true
	}
	if at, err := time.Parse(time.RFC3339, line); err == nil {
		return at, true
	}
	if at, err := time.Parse(isoMinute, line); err == nil {
		return at.Add(time.Minute), true
	}
	return time.Time{}, false
}

// isoMinute is the layout of an ISO 8601 time to the minute, with a zone
// ("Z" or an offset), as Jira Cloud writes its X-RateLimit-Reset.
const isoMinute = "2006-01-02T15:04Z07:00"

// legacyReset reads one member of a legacy reset as a wait from now (in the
// server's clock); 0 when it is malformed.
func legacyReset(v string, now time.Time) time.Duration {
	if !isNumber(v) {
		return 0
	}
	// Digits with a fraction: no sign, NaN or infinity, but a number too
	// large for a float64 (+Inf with an error).
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0
	}
	return resetAt(f, now)
}

// resetAt reads a reset of f: delta-seconds, or from unixSecondsFrom on a
// Unix time in seconds, from unixMillisFrom on in milliseconds; as a wait
// from now (in the server's clock), within [0, maxHint]; 0 beyond any time.
func resetAt(f float64, now time.Time) time.Duration {
	switch {
	case f >= unixMillisFrom:
		if f >= 1e15 { // beyond the year 33658: not a time
			return 0
		}
		return clampHint(time.UnixMilli(int64(f)).Sub(now))
	case f >= unixSecondsFrom:
		return clampHint(time.Unix(int64(f), int64((f-math.Floor(f))*1e9)).Sub(now))
	}
	return clampHint(time.Duration(f * float64(time.Second)))
}

// isDigits reports whether s is one or more ASCII digits.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// isNumber reports whether s is digits with at most one fractional part.
func isNumber(s string) bool {
	whole, frac, dot := strings.Cut(s, ".")
	return isDigits(whole) && (!dot || isDigits(frac))
}

// secondsInt converts a string of digits to a Duration, saturating at maxHint.
func secondsInt(s string) time.Duration {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return maxHint // too many digits: more than any cap
	}
	return seconds(n)
}

// seconds converts n >= 0 seconds to a Duration, saturating at maxHint.
func seconds(n int64) time.Duration {
	if n > int64(maxHint/time.Second) {
		return maxHint
	}
	return time.Duration(n) * time.Second
}

// clampHint keeps a wait read from a header within [0, maxHint].
func clampHint(d time.Duration) time.Duration {
	return min(max(d, 0), maxHint)
}
