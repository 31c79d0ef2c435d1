package client

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The vendors' rate-limit dialects beyond the IETF and X-RateLimit fields:
// OpenAI's and Anthropic's request quotas. Their token quotas
// (x-ratelimit-*-tokens, anthropic-ratelimit-*tokens-*) are not read: the
// Transport counts requests and cannot know how many tokens the next one
// needs, so it cannot tell when enough are back; a request that finds too
// few earns a 429, whose Retry-After (or retry-after-ms) it honours.
//
// Both APIs announce when the request quota is back in full (OpenAI: "the
// time until the rate limit resets to its initial state"; Anthropic: "fully
// replenished"), and both refill it continuously: with none left, one
// request's share of that time lets the next request go. When the quota's
// size is given, the hold is the reset divided by it (rounded up);
// otherwise the whole reset, which is never too early.

// openAIHold reads x-ratelimit-remaining-requests and
// x-ratelimit-reset-requests (with x-ratelimit-limit-requests).
func openAIHold(h http.Header) time.Duration {
	if !isZero(first(h, canonOpenAIRemaining)) {
		return 0
	}
	reset, ok := goDuration(strings.TrimSpace(first(h, canonOpenAIReset)))
	if !ok {
		return 0
	}
	return perRequest(reset, first(h, canonOpenAILimit))
}

// anthropicHold reads anthropic-ratelimit-requests-remaining and
// anthropic-ratelimit-requests-reset (with
// anthropic-ratelimit-requests-limit). The reset is an RFC 3339 instant in
// the server's clock (see serverNow).
func anthropicHold(h http.Header, now time.Time) time.Duration {
	if !isZero(first(h, canonAnthropicRemaining)) {
		return 0
	}
	v := strings.TrimSpace(first(h, canonAnthropicReset))
	if v == "" {
		return 0
	}
	at, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return 0
	}
	return perRequest(clampHint(at.Sub(serverNow(h, now))), first(h, canonAnthropicLimit))
}

// perRequest returns one request's share of reset, the time a quota of
// limit requests takes to come back in full: reset/limit rounded up, or
// reset itself when limit is not a positive integer or reset saturated
// (maxHint: more than any cap, not a number to divide).
func perRequest(reset time.Duration, limit string) time.Duration {
	limit = strings.TrimSpace(limit)
	if reset <= 0 || reset >= maxHint || !isDigits(limit) {
		return reset
	}
	n, err := strconv.ParseInt(limit, 10, 64)
	if err != nil || n <= 0 {
		return reset
	}
	// Rounded up without adding n-1 first, which overflows for an n near
	// the largest int64.
	share := reset / time.Duration(n)
	if reset%time.Duration(n) != 0 {
		share++
	}
	return share
}

// isZero reports whether s, trimmed, is one or more ASCII zeros: a
// remaining count of none.
func isZero(s string) bool {
	s = strings.TrimSpace(s)
	return isDigits(s) && strings.TrimLeft(s, "0") == ""
}

// decimal reads s, ASCII digits with at most one fractional part of one or
// more digits, as a number of units. It saturates at maxHint and drops
// what is below a nanosecond; it reports false for any other s.
func decimal(s string, unit time.Duration) (time.Duration, bool) {
	if !isNumber(s) {
		return 0, false
	}
	whole, frac, _ := strings.Cut(s, ".")
	limit := int64(maxHint / unit)
	var n int64
	for i := 0; i < len(whole); i++ {
		n = n*10 + int64(whole[i]-'0')
		if n > limit {
			return maxHint, true
		}
	}
	d := time.Duration(n) * unit
	for i, scale := 0, unit; i < len(frac) && scale >= 10; i++ {
		scale /= 10
		d += time.Duration(frac[i]-'0') * scale
	}
	return min(d, maxHint), true
}

// goDuration reads s as Go's Duration.String writes a positive duration
// (OpenAI's resets: "20ms", "1s", "6m0s", "8.64s", "1h2m3s"): one or more
// decimal numbers, each with a unit among h, m, s, ms, us (or µs) and ns;
// no sign, no exponent, no spaces. A bare number is seconds. It saturates
// at maxHint, and reports false for a malformed s.
func goDuration(s string) (time.Duration, bool) {
	if isNumber(s) {
		return decimal(s, time.Second)
	}
	if s == "" {
		return 0, false
	}
	var total time.Duration
	for s != "" {
		i := 0
		for i < len(s) && (isDigit(s[i]) || s[i] == '.') {
			i++
		}
		num := s[:i]
		j := i
		for j < len(s) && !isDigit(s[j]) && s[j] != '.' {
			j++
		}
		unit, ok := durationUnit(s[i:j])
		if !ok || !isNumber(num) {
			return 0, false
		}
		d, _ := decimal(num, unit)
		total = min(total+d, maxHint) // each at most maxHint: no overflow
		s = s[j:]
	}
	return total, true
}

// durationUnit returns the length of the unit u of a Go duration.
func durationUnit(u string) (time.Duration, bool) {
	switch u {
	case "h":
		return time.Hour, true
	case "m":
		return time.Minute, true
	case "s":
		return time.Second, true
	case "ms":
		return time.Millisecond, true
	case "us", "µs", "μs": // U+00B5 and U+03BC, as time.ParseDuration
		return time.Microsecond, true
	case "ns":
		return time.Nanosecond, true
	}
	return 0, false
}
