package client

import (
	"net/http"
	"strings"
	"time"
)

// The vendors' rate-limit dialects beyond the IETF and X-RateLimit fields:
// Discord's X-RateLimit-Reset-After, and OpenAI's and Anthropic's request
// quotas.
//
// Discord (discord.com/developers/docs/topics/rate-limits, "Header
// Format") sends X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset
// (Unix seconds, with a fraction: "1470173023.123", read as the legacy
// field) and X-RateLimit-Reset-After, "total time (in seconds) of when the
// current rate limit bucket will reset", with decimals ("64.57"). The two
// resets name one instant, the second relative to the response: no clock
// skew bends it, where the first, counted from a local clock that runs
// ahead of Discord's within the skew taken as in step (see serverNow), is
// short. Both are read, and the later counts: no form read wrongly lets a
// request go early, and the Unix one's error, with a clock in step or from
// a Date in whole seconds, is at most a second long.
//
// Discord's X-RateLimit-Bucket, "a unique string denoting the rate limit
// being encountered", shared by several routes, is not read: a hold is on
// the request's key (see [WithKey]; the host by default), which the
// Transport knows before it sends the request, where a bucket is known only
// from the responses of each route (Discord asks clients to "group shared
// limits as you encounter them"). A bucket spent on one route holds the
// other routes of its key too: cautious, never a 429 for it. A key finer than the host (a route) holds that route alone,
// and then a refusal for the global limit (X-RateLimit-Global: true,
// X-RateLimit-Scope: global) holds only its own key; the others meet their
// own refusals. X-RateLimit-Scope and X-RateLimit-Global are not read
// either: Discord's 429s carry a Retry-After ("your application should
// rely on the Retry-After header"), which the Transport honours whatever
// the scope, and which wins over the rate-limit fields.
//
// OpenAI's and Anthropic's token quotas
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

// discordHold reads Discord's X-RateLimit-Reset-After with the legacy
// X-RateLimit-Remaining (see anyBelowOne): a wait in seconds, digits with
// an optional fraction (see decimal), the longest of its lines and members
// (see numbers). It is never a Unix time: a value too large for a wait is
// one beyond every cap.
func discordHold(h http.Header) time.Duration {
	resets := h[canonXResetAfter]
	if len(resets) == 0 || !anyBelowOne(h[canonXRemaining]) {
		return 0
	}
	d, _ := longest(numbers(resets), func(v string) (time.Duration, bool) {
		return decimal(strings.TrimSpace(v), time.Second)
	})
	return d
}

// openAIHold reads x-ratelimit-remaining-requests and
// x-ratelimit-reset-requests (with x-ratelimit-limit-requests), each
// possibly in several lines or members of a line (see members): a Go
// duration holds no comma.
func openAIHold(h http.Header) time.Duration {
	if !anyZero(h[canonOpenAIRemaining]) {
		return 0
	}
	reset, _ := longest(members(h[canonOpenAIReset]), func(v string) (time.Duration, bool) {
		return goDuration(strings.TrimSpace(v))
	})
	return perRequest(reset, quota(h[canonOpenAILimit]))
}

// anthropicHold reads anthropic-ratelimit-requests-remaining and
// anthropic-ratelimit-requests-reset (with
// anthropic-ratelimit-requests-limit), each possibly in several lines or
// members of a line (see members). The reset is an RFC 3339 instant in the
// server's clock (see serverNow). Go's parser also takes a comma before a
// fraction of a second ("12:00:12,5Z"), so a reset line that is one
// instant is read whole, and only another one member by member.
func anthropicHold(h http.Header, now time.Time) time.Duration {
	if !anyZero(h[canonAnthropicRemaining]) {
		return 0
	}
	resets := h[canonAnthropicReset]
	if len(resets) == 0 {
		return 0
	}
	server := serverNow(h, now)
	instant := func(v string) (time.Duration, bool) {
		at, err := time.Parse(time.RFC3339, strings.TrimSpace(v))
		if err != nil {
			return 0, false
		}
		return clampHint(at.Sub(server)), true
	}
	var reset time.Duration
	for i, v := range resets {
		d, ok := instant(v)
		if !ok {
			d, _ = longest(members(resets[i:i+1]), instant)
		}
		reset = max(reset, d)
	}
	return perRequest(reset, quota(h[canonAnthropicLimit]))
}

// perRequest returns one request's share of reset, the time a quota of
// limit requests takes to come back in full: reset/limit rounded up, or
// reset itself when limit is not positive (unknown) or reset saturated
// (maxHint: more than any cap, not a number to divide).
func perRequest(reset time.Duration, limit int64) time.Duration {
	if reset <= 0 || reset >= maxHint || limit <= 0 {
		return reset
	}
	// Rounded up without adding n-1 first, which overflows for an n near
	// the largest int64.
	n := time.Duration(limit)
	share := reset / n
	if reset%n != 0 {
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
// more digits, as a number of units. It saturates at maxHint and rounds a
// part of a nanosecond up (see scaled); it reports false for any other s:
// no sign, exponent, NaN or infinity, no point without a digit on each
// side.
func decimal(s string, unit time.Duration) (time.Duration, bool) {
	if !isNumber(s) {
		return 0, false
	}
	whole, frac, _ := strings.Cut(s, ".")
	return scaled(whole, frac, unit), true
}

// scaled returns whole.frac units, each of whole and frac ASCII digits
// (either may be empty), saturating at maxHint. It is exact to the
// nanosecond, and a part of a nanosecond rounds up: a wait read from a
// header is never shorter than the server asked.
func scaled(whole, frac string, unit time.Duration) time.Duration {
	limit := int64(maxHint / unit)
	var n int64
	for i := 0; i < len(whole); i++ {
		n = n*10 + int64(whole[i]-'0')
		if n > limit {
			return maxHint
		}
	}
	// unit·0.frac, digit by digit from the last (Horner's rule): each step
	// divides by ten, and its floor loses only what inexact records (the
	// floor of (N+f)/10 is that of N/10 for 0 <= f < 1). No step exceeds
	// ten units: no overflow, whatever the length of frac.
	var part time.Duration
	inexact := false
	for i := len(frac) - 1; i >= 0; i-- {
		v := time.Duration(frac[i]-'0')*unit + part
		part, inexact = v/10, inexact || v%10 != 0
	}
	if inexact {
		part++
	}
	return min(time.Duration(n)*unit+part, maxHint) // n·unit <= maxHint, part <= unit: no overflow
}

// goDuration reads s as time.ParseDuration reads a non-negative duration
// (OpenAI's resets, written by Go's Duration.String: "20ms", "1s", "6m0s",
// "8.64s", "1h2m3s"; or by hand: ".5s", "1.s"): an optional "+", then one
// or more decimal numbers, each of digits with an optional fraction (either
// side of the point may be empty, not both) and a unit among h, m, s, ms,
// us (or µs) and ns; or "0". No "-" (a negative wait means nothing), no
// exponent, no spaces. A bare number, digits with an optional fraction of
// one or more digits, is seconds. It reads a fraction exactly, and rounds
// a part of a nanosecond up (see scaled), where ParseDuration drops it
// (and scales a fraction of an hour or minute in floating point, a little
// short at times). Where ParseDuration overflows, goDuration
// saturates at maxHint (a wait beyond every cap, not a malformed one); it
// reports false for a malformed s.
func goDuration(s string) (time.Duration, bool) {
	if isNumber(s) {
		return decimal(s, time.Second)
	}
	s = strings.TrimPrefix(s, "+")
	if s == "0" {
		return 0, true
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
		whole, frac, _ := strings.Cut(s[:i], ".")
		if whole == "" && frac == "" || strings.Contains(frac, ".") {
			return 0, false // no digits, or a second point
		}
		j := i
		for j < len(s) && !isDigit(s[j]) && s[j] != '.' {
			j++
		}
		unit, ok := durationUnit(s[i:j])
		if !ok {
			return 0, false
		}
		total = min(total+scaled(whole, frac, unit), maxHint) // each at most maxHint: no overflow
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
