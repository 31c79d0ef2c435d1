package client

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The millisecond Retry-After fields of Azure and OpenAI (retry-after-ms,
// x-ms-retry-after-ms) are read before Retry-After, the most precise first,
// as the Azure and OpenAI SDKs do: the first valid one that asks for a
// wait is the wait. An invalid one is skipped, as if absent, and so is one
// asking for no wait when another form asks for one.
func TestParseRetryAfterMillis(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    http.Header
		want time.Duration
		ok   bool
	}{
		{"retry-after-ms", header("retry-after-ms", "1500"), 1500 * time.Millisecond, true},
		{"retry-after-ms fraction", header("retry-after-ms", "2.5"), 2500 * time.Microsecond, true},
		{"retry-after-ms nanoseconds", header("retry-after-ms", "0.000001"), time.Nanosecond, true},
		{"retry-after-ms below a nanosecond", header("retry-after-ms", "0.0000009"), time.Nanosecond, true},
		{"retry-after-ms rounded up to the nanosecond", header("retry-after-ms", "0.0000019"), 2 * time.Nanosecond, true},
		{"retry-after-ms zero hides no wait", header("retry-after-ms", "0", "Retry-After", "5"), 5 * time.Second, true},
		{"retry-after-ms zero alone", header("retry-after-ms", "0"), 0, true},
		{"every form zero", header("retry-after-ms", "0", "x-ms-retry-after-ms", "0.0", "Retry-After", "0"), 0, true},
		{"retry-after-ms spaces", header("retry-after-ms", " 40 "), 40 * time.Millisecond, true},
		{"x-ms-retry-after-ms", header("x-ms-retry-after-ms", "250"), 250 * time.Millisecond, true},
		{"ms before Retry-After", header("Retry-After", "2", "retry-after-ms", "1200"), 1200 * time.Millisecond, true},
		{"retry-after-ms before x-ms", header("x-ms-retry-after-ms", "900", "retry-after-ms", "300"), 300 * time.Millisecond, true},
		{"invalid ms falls back to x-ms", header("retry-after-ms", "soon", "x-ms-retry-after-ms", "700"), 700 * time.Millisecond, true},
		{"invalid ms falls back to Retry-After", header("retry-after-ms", "-5", "x-ms-retry-after-ms", "1e3", "Retry-After", "3"), 3 * time.Second, true},
		{"ms saturates", header("retry-after-ms", "99999999999999999999999999"), maxHint, true},
		{"ms just over the cap saturates", header("retry-after-ms", strconv.FormatInt(maxHint.Milliseconds()+1, 10)), maxHint, true},
		{"ms long fraction", header("retry-after-ms", "1.500000000000000000000000000001"), 1500*time.Microsecond + time.Nanosecond, true},
		{"ms long zero fraction", header("retry-after-ms", "1.500000000000000000000000000000"), 1500 * time.Microsecond, true},
		{"ms alone invalid", header("retry-after-ms", "NaN"), 0, false},
		{"longest line", header("retry-after-ms", "900", "retry-after-ms", "100"), 900 * time.Millisecond, true},
		{"longest line, last", header("retry-after-ms", "100", "retry-after-ms", "900"), 900 * time.Millisecond, true},
		{"invalid line skipped", header("retry-after-ms", "soon", "retry-after-ms", "40", "Retry-After", "3"), 40 * time.Millisecond, true},
		{"every line invalid", header("retry-after-ms", "soon", "retry-after-ms", "", "Retry-After", "3"), 3 * time.Second, true},
		{"Retry-After lines", header("Retry-After", "2", "Retry-After", "-1", "Retry-After", "5"), 5 * time.Second, true},
		{"Retry-After saturated line", header("Retry-After", "2", "Retry-After", "99999999999999999999"), maxHint, true},
		{"Retry-After every line invalid", header("Retry-After", "", "Retry-After", "soon"), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseRetryAfter(tc.h, now)
			if got != tc.want || ok != tc.ok {
				t.Errorf("parseRetryAfter(%v) = %v, %v; want %v, %v", tc.h, got, ok, tc.want, tc.ok)
			}
		})
	}
	for _, v := range []string{"", "abc", "-1", "+1", "1e3", "Inf", "NaN", "1.", ".5", "1.5.5", "0x10", "1 000", "١٢"} {
		if got, ok := parseRetryAfter(header("retry-after-ms", v), now); ok || got != 0 {
			t.Errorf("retry-after-ms %q: %v, %v; want ignored", v, got, ok)
		}
	}
}

// The other widely deployed rate-limit dialects, each with the syntax its
// API publishes: X-Rate-Limit-* (X API: Unix seconds), OpenAI's
// x-ratelimit-*-requests (a Go duration until the request quota is back in
// full), Anthropic's anthropic-ratelimit-requests-* (an RFC 3339 instant at
// which it is back in full). The "requests" quotas refill continuously: with
// none left, the next request can go once one request's share of the full
// reset has passed (reset / limit, when the limit is given).
func TestServerHoldDialects(t *testing.T) {
	unix := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	rfc := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339Nano) }
	for _, tc := range []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		// X API (Twitter): x-rate-limit-*, reset in Unix seconds.
		{"x-rate-limit", header("x-rate-limit-limit", "900", "x-rate-limit-remaining", "0", "x-rate-limit-reset", unix(9*time.Second)), 9 * time.Second},
		{"x-rate-limit left", header("x-rate-limit-remaining", "847", "x-rate-limit-reset", unix(9*time.Second)), 0},
		{"x-rate-limit past", header("x-rate-limit-remaining", "0", "x-rate-limit-reset", unix(-time.Minute)), 0},
		{"x-rate-limit delta", header("x-rate-limit-remaining", "0", "x-rate-limit-reset", "7"), 7 * time.Second},
		{"spellings not mixed", header("X-RateLimit-Remaining", "0", "X-Rate-Limit-Reset", unix(9*time.Second)), 0},
		{"spellings not mixed either way", header("X-Rate-Limit-Remaining", "0", "X-RateLimit-Reset", unix(9*time.Second)), 0},
		// GitHub: X-RateLimit-*, reset in Unix seconds.
		{"github", header("x-ratelimit-limit", "5000", "x-ratelimit-remaining", "0", "x-ratelimit-used", "5000",
			"x-ratelimit-resource", "core", "x-ratelimit-reset", unix(40*time.Second)), 40 * time.Second},
		// OpenAI: x-ratelimit-*-requests, reset a Go duration.
		{"openai", header("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "20ms"), 20 * time.Millisecond},
		{"openai seconds", header("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "1s"), time.Second},
		{"openai minutes", header("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "6m0s"), 6 * time.Minute},
		{"openai fraction", header("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "8.64s"), 8640 * time.Millisecond},
		{"openai fraction, no whole part", header("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", ".5s"), 500 * time.Millisecond},
		{"openai fraction, no digits after the point", header("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "1.s"), time.Second},
		{"openai minutes and half-seconds", header("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "1m.5s"), 60500 * time.Millisecond},
		{"openai all units", header("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "1h2m3s4ms5us6ns"),
			time.Hour + 2*time.Minute + 3*time.Second + 4*time.Millisecond + 5*time.Microsecond + 6},
		{"openai micro sign", header("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "7µs"), 7 * time.Microsecond},
		{"openai bare seconds (Azure)", header("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "2"), 2 * time.Second},
		{"openai with limit", header("x-ratelimit-limit-requests", "60", "x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "1m0s"), time.Second},
		{"openai limit zero ignored", header("x-ratelimit-limit-requests", "0", "x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "1m0s"), time.Minute},
		{"openai limit invalid ignored", header("x-ratelimit-limit-requests", "-1", "x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "30s"), 30 * time.Second},
		// Several lines: none left when any says so, the latest reset,
		// the smallest quota (see longest).
		{"openai lines", header("x-ratelimit-remaining-requests", "0", "x-ratelimit-remaining-requests", "5",
			"x-ratelimit-reset-requests", "1s", "x-ratelimit-reset-requests", "2s"), 2 * time.Second},
		{"openai lines, invalid reset skipped", header("x-ratelimit-remaining-requests", "0",
			"x-ratelimit-reset-requests", "3s", "x-ratelimit-reset-requests", "-9s"), 3 * time.Second},
		{"openai lines, every reset invalid", header("x-ratelimit-remaining-requests", "0",
			"x-ratelimit-reset-requests", "soon", "x-ratelimit-reset-requests", ""), 0},
		{"openai lines, huge quota skipped", header("x-ratelimit-limit-requests", "99999999999999999999", "x-ratelimit-limit-requests", "10",
			"x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "10s"), time.Second},
		{"anthropic lines, invalid reset skipped", header("anthropic-ratelimit-requests-remaining", "0",
			"anthropic-ratelimit-requests-reset", "tomorrow", "anthropic-ratelimit-requests-reset", rfc(8*time.Second)), 8 * time.Second},
		{"x-rate-limit lines, no reset", header("x-rate-limit-remaining", "0", "x-rate-limit-remaining", "0"), 0},
		{"x-rate-limit lines, past and future", header("x-rate-limit-remaining", "0",
			"x-rate-limit-reset", unix(-time.Minute), "x-rate-limit-reset", unix(7*time.Second)), 7 * time.Second},
		{"openai left", header("x-ratelimit-limit-requests", "5000", "x-ratelimit-remaining-requests", "4999", "x-ratelimit-reset-requests", "12ms"), 0},
		{"openai unknown (Azure -1)", header("x-ratelimit-remaining-requests", "-1", "x-ratelimit-reset-requests", "0"), 0},
		{"openai saturates", header("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "999999999999h"), maxHint},
		{"openai saturated not divided", header("x-ratelimit-limit-requests", "1000000", "x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "999999999999h"), maxHint},
		// Tokens are not requests: the Transport cannot know how many the
		// next request needs, and does not hold for them.
		{"openai tokens not read", header("x-ratelimit-remaining-tokens", "0", "x-ratelimit-reset-tokens", "6m0s"), 0},
		// Anthropic: anthropic-ratelimit-requests-*, reset an RFC 3339 instant.
		{"anthropic", header("anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", rfc(30*time.Second)), 30 * time.Second},
		{"anthropic offset", header("anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset",
			now.Add(30*time.Second).In(time.FixedZone("", -5*3600)).Format(time.RFC3339)), 30 * time.Second},
		{"anthropic fraction", header("anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", rfc(1500*time.Millisecond)), 1500 * time.Millisecond},
		{"anthropic with limit", header("anthropic-ratelimit-requests-limit", "50", "anthropic-ratelimit-requests-remaining", "0",
			"anthropic-ratelimit-requests-reset", rfc(time.Minute)), 1200 * time.Millisecond},
		{"anthropic left", header("anthropic-ratelimit-requests-remaining", "3", "anthropic-ratelimit-requests-reset", rfc(time.Minute)), 0},
		{"anthropic past", header("anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", rfc(-time.Minute)), 0},
		{"anthropic far", header("anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", "9999-12-31T23:59:59Z"), maxHint},
		{"anthropic tokens not read", header("anthropic-ratelimit-tokens-remaining", "0", "anthropic-ratelimit-tokens-reset", rfc(time.Minute),
			"anthropic-ratelimit-input-tokens-remaining", "0", "anthropic-ratelimit-input-tokens-reset", rfc(time.Minute)), 0},
		// Several dialects: each may describe a different limit, and a
		// request needs quota under all of them: the longest hold.
		{"several, longest", header("RateLimit", `"a";r=0;t=2`,
			"x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "3s",
			"anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", rfc(5*time.Second),
			"x-rate-limit-remaining", "0", "x-rate-limit-reset", unix(4*time.Second)), 5 * time.Second},
		{"several, one exhausted", header("RateLimit", `"a";r=5;t=20`,
			"x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "250ms"), 250 * time.Millisecond},
		// A response from a cache is stale in every dialect.
		{"cached", header("Age", "30", "x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "3s",
			"anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", rfc(5*time.Second)), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := serverHold(tc.h, now); got != tc.want {
				t.Errorf("serverHold(%v) = %v, want %v", tc.h, got, tc.want)
			}
		})
	}
}

// Malformed fields of the new dialects are ignored: no hold, no panic.
func TestServerHoldDialectsMalformed(t *testing.T) {
	for _, reset := range []string{"", "s", "1", "-1s", "-.5s", "1x", "1 s", ".s", "1..s", "1e3s", "1S", "Inf", "NaN", "1s-", "ms", "1h 2m", "0x1s", "١s"} {
		h := header("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", reset)
		if reset == "1" {
			// The one bare number read (as seconds): the check below
			// is of the remaining field instead.
			h = header("x-ratelimit-remaining-requests", "none", "x-ratelimit-reset-requests", reset)
		}
		if got := serverHold(h, now); got != 0 {
			t.Errorf("x-ratelimit-reset-requests %q: serverHold = %v, want 0", reset, got)
		}
	}
	for _, h := range []http.Header{
		header("x-ratelimit-remaining-requests", "0.0", "x-ratelimit-reset-requests", "1s"),
		header("x-ratelimit-remaining-requests", "", "x-ratelimit-reset-requests", "1s"),
		header("anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", "tomorrow"),
		header("anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", unixString(now.Add(time.Minute))),
		header("anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", "30s"),
		header("anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", now.Add(time.Minute).Format(http.TimeFormat)),
		header("anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", now.Add(time.Minute).Format("2006-01-02 15:04:05Z07:00")),
		header("anthropic-ratelimit-requests-remaining", "-0", "anthropic-ratelimit-requests-reset", now.Add(time.Minute).Format(time.RFC3339)),
		header("x-rate-limit-remaining", "0", "x-rate-limit-reset", "NaN"),
		header("x-rate-limit-remaining", "0", "x-rate-limit-reset", "-5"),
		header("x-rate-limit-remaining", "zero", "x-rate-limit-reset", "5"),
	} {
		if got := serverHold(h, now); got != 0 {
			t.Errorf("serverHold(%q) = %v, want 0 (ignored)", h, got)
		}
	}
}

func unixString(t time.Time) string { return strconv.FormatInt(t.Unix(), 10) }

// An RFC 3339 reset is an instant in the server's clock, as a Unix-time
// reset is: when the response's Date shows the local clock out of step,
// the wait counts from Date (see serverNow).
func TestAnthropicResetFollowsTheServersDate(t *testing.T) {
	local := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, skew := range []time.Duration{-10 * time.Minute, 10 * time.Minute, time.Hour} {
		server := local.Add(skew)
		h := header("Date", server.Format(http.TimeFormat),
			"anthropic-ratelimit-requests-remaining", "0",
			"anthropic-ratelimit-requests-reset", server.Add(20*time.Second).Format(time.RFC3339))
		if got := serverHold(h, local); got != 20*time.Second {
			t.Errorf("server clock %v from ours: serverHold = %v, want 20s", skew, got)
		}
		h = header("Date", server.Format(http.TimeFormat),
			"x-rate-limit-remaining", "0", "x-rate-limit-reset", unixString(server.Add(20*time.Second)))
		if got := serverHold(h, local); got != 20*time.Second {
			t.Errorf("server clock %v from ours: x-rate-limit-reset hold = %v, want 20s", skew, got)
		}
	}
}

// Reading the headers of an ordinary response, one that leaves quota in
// any dialect, allocates nothing: it is done for every response.
func TestServerHoldCommonPathAllocs(t *testing.T) {
	for _, h := range []http.Header{
		header("Date", now.Format(http.TimeFormat), "x-ratelimit-limit", "5000", "x-ratelimit-remaining", "4999",
			"x-ratelimit-reset", unixString(now.Add(time.Hour)), "x-ratelimit-used", "1"),
		header("x-rate-limit-limit", "900", "x-rate-limit-remaining", "847", "x-rate-limit-reset", unixString(now.Add(time.Minute))),
		header("x-ratelimit-limit-requests", "5000", "x-ratelimit-remaining-requests", "4999", "x-ratelimit-reset-requests", "12ms",
			"x-ratelimit-limit-tokens", "160000", "x-ratelimit-remaining-tokens", "159976", "x-ratelimit-reset-tokens", "9ms"),
		header("anthropic-ratelimit-requests-limit", "50", "anthropic-ratelimit-requests-remaining", "49",
			"anthropic-ratelimit-requests-reset", now.Add(time.Second).Format(time.RFC3339)),
		header(),
	} {
		if n := testing.AllocsPerRun(100, func() { serverHold(h, now) }); n != 0 {
			t.Errorf("serverHold(%v): %v allocations, want 0", h, n)
		}
	}
	// A hold read from OpenAI's or Anthropic's fields, and a millisecond
	// Retry-After, allocate nothing either.
	for _, h := range []http.Header{
		header("x-ratelimit-limit-requests", "60", "x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "1m0s"),
		header("x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "+1m.5s"),
		header("anthropic-ratelimit-requests-limit", "50", "anthropic-ratelimit-requests-remaining", "0",
			"anthropic-ratelimit-requests-reset", now.Add(time.Minute).Format(time.RFC3339)),
		header("retry-after-ms", "1500", "Retry-After", "2"),
		// Fields in several lines, each read on its own.
		header("retry-after-ms", "soon", "retry-after-ms", "1500", "Retry-After", "2", "Retry-After", "3",
			"x-ratelimit-limit-requests", "60", "x-ratelimit-limit-requests", "30",
			"x-ratelimit-remaining-requests", "5", "x-ratelimit-remaining-requests", "0",
			"x-ratelimit-reset-requests", "1m0s", "x-ratelimit-reset-requests", "2m0s",
			"anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-remaining", "0",
			"anthropic-ratelimit-requests-reset", now.Add(time.Minute).Format(time.RFC3339),
			"anthropic-ratelimit-requests-reset", now.Add(2*time.Minute).Format(time.RFC3339)),
		header("x-rate-limit-remaining", "9", "x-rate-limit-remaining", "0", "x-rate-limit-reset", "4", "x-rate-limit-reset", "5"),
	} {
		if n := testing.AllocsPerRun(100, func() { serverHold(h, now); parseRetryAfter(h, now) }); n != 0 {
			t.Errorf("serverHold(%v): %v allocations, want 0", h, n)
		}
	}
}

// goDuration reads every non-negative duration time.ParseDuration reads, in
// every form it reads it (servers write their resets with Go's
// Duration.String, or by hand: OpenAI-style ".5s"), and a bare number as
// seconds, exactly, a part of a nanosecond rounded up; it refuses a negative duration and anything ParseDuration
// refuses, and saturates at maxHint where ParseDuration overflows.
func TestGoDuration(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want time.Duration
	}{
		{"20ms", 20 * time.Millisecond},
		{"6m0s", 6 * time.Minute},
		{"8.64s", 8640 * time.Millisecond},
		{".5s", 500 * time.Millisecond},
		{"1.s", time.Second},
		{"1.5m.5s", 90*time.Second + 500*time.Millisecond},
		{"0.s", 0},
		{".0s", 0},
		{"1s.25s", 1250 * time.Millisecond},
		{"+1s", time.Second},
		{"+.5s", 500 * time.Millisecond},
		{"0", 0},
		{"+0", 0},
		{"1h1h", 2 * time.Hour},
		{"00001s", time.Second},
		{"1.0000000001s", time.Second + time.Nanosecond}, // a part of a nanosecond rounds up
		{"1.0000000000s", time.Second},
		{"1.0000000000001h", time.Hour + time.Nanosecond},
		{"1.3333333333333333333h", 4800 * time.Second},
		{".000000001s", time.Nanosecond},
		{"2", 2 * time.Second},
		{"2.5", 2500 * time.Millisecond},
		{"2562047h47m16.854775807s", maxHint}, // time.Duration's largest
		{"2562047h47m16.854775808s", maxHint}, // beyond it
		{"99999999999999999999h", maxHint},
		{"8760h", maxHint},
		{"8759h59m59.999999999s", maxHint - 1},
	} {
		got, ok := goDuration(tc.s)
		if !ok || got != tc.want {
			t.Errorf("goDuration(%q) = %v, %v; want %v", tc.s, got, ok, tc.want)
		}
		// ParseDuration drops a part of a nanosecond, and scales a
		// fraction of an hour or minute in floating point.
		if std, err := time.ParseDuration(tc.s); err == nil && std < maxHint && (got-std < 0 || got-std > time.Microsecond) {
			t.Errorf("goDuration(%q) = %v, time.ParseDuration %v", tc.s, got, std)
		}
	}
	for _, s := range []string{
		"", "s", ".s", "..5s", "1..s", "1.5.5s", "1", // "1" aside: see below
		"-1s", "-.5s", "-0", "-0s", "--1s", "++1s", "+", "+s", "+2", "+.5", "+2.5",
		".", ".5", "1.", "1s.", "1s.5", "5x", "1S", "1e3s", "1 s", " 1s", "1s ", "0x1s",
		"1h 2m", "1s-", "1s+1s", "Inf", "NaN", "ms", "١s", "1us\u00b5",
	} {
		if s == "1" {
			continue // a bare number: seconds
		}
		if got, ok := goDuration(s); ok {
			t.Errorf("goDuration(%q) = %v, true; want refused", s, got)
		}
	}
}

// FuzzGoDuration checks the reset and millisecond parsers against the
// standard library's. goDuration reads what time.ParseDuration reads, but
// for negative durations (refused) and bare numbers (seconds): each
// duration one reads below the saturation the other reads too, within a
// microsecond (ParseDuration scales fractions in floating point), and one
// that overflows ParseDuration saturates goDuration. A number decimal reads
// is one strconv.ParseFloat reads, within a nanosecond per unit's rounding.
// Both stay within [0, maxHint].
func FuzzGoDuration(f *testing.F) {
	for _, s := range []string{"20ms", "1s", "6m0s", "8.64s", "1h2m3s4ms5us6ns", "7µs", "2", "2.5", "1.s", ".5s", "-1s", "1e3", "99999999999999999999h",
		"+1s", "+0", "-0", ".s", "1.5m.5s", "2562047h47m16.854775808s", "8759h59m59.99999999999999999s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := goDuration(s)
		if ok && (d < 0 || d > maxHint) {
			t.Fatalf("goDuration(%q) = %v", s, d)
		}
		std := s
		if isNumber(s) {
			std += "s" // a bare number is seconds
		}
		want, err := time.ParseDuration(std)
		switch {
		case err == nil && strings.HasPrefix(s, "-"):
			if ok {
				t.Fatalf("goDuration(%q) = %v, want refused (negative)", s, d)
			}
		case err == nil:
			if !ok {
				t.Fatalf("goDuration(%q) refused, but time.ParseDuration: %v", s, want)
			}
			// Saturated where ParseDuration reads maxHint or more.
			if diff := d - min(want, maxHint); diff < -time.Microsecond || diff > time.Microsecond {
				t.Fatalf("goDuration(%q) = %v, time.ParseDuration %v (saturating at %v)", s, d, want, maxHint)
			}
		case ok && d < maxHint:
			t.Fatalf("goDuration(%q) = %v, but time.ParseDuration: %v", s, d, err)
		}
		if d, ok := decimal(s, time.Millisecond); ok {
			if d < 0 || d > maxHint {
				t.Fatalf("decimal(%q) = %v", s, d)
			}
			v, err := strconv.ParseFloat(s, 64)
			if errors.Is(err, strconv.ErrRange) && d == maxHint {
				return // beyond float64: saturated, rightly
			}
			if err != nil {
				t.Fatalf("decimal(%q) = %v, but strconv.ParseFloat: %v", s, d, err)
			}
			if want := v * float64(time.Millisecond); d < maxHint && (float64(d) > want+1 || float64(d) < want-1-want*1e-15) {
				t.Fatalf("decimal(%q) = %v, want about %v ns", s, d, want)
			}
		}
	})
}

// FuzzParseRetryAfter checks every form of Retry-After (retry-after-ms,
// x-ms-retry-after-ms, Retry-After) against strconv.ParseFloat: no value
// makes it panic or read a wait outside [0, maxHint]; a value that is a
// number (digits, with a fraction or not) is read, never shorter than the
// number says and less than a nanosecond longer (but for what ParseFloat
// rounds), or maxHint beyond it; and no other value without a comma is
// read as one (Retry-After reads an HTTP-date too; the millisecond fields
// read each member of a line a proxy joined).
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"1.5", "0.25", "120", " 7 ", "1.0000000001", "0.0000000001", "99999999999999999999.5",
		"1.5s", "-1", "-1.5", "+1.5", "1e9", "nan", "NaN", "Inf", "1.", ".5", "1,5", "0x10", "١٢",
		"Sun, 01 Mar 2026 12:00:30 GMT"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, tc := range []struct {
			field string
			unit  time.Duration
		}{{"retry-after-ms", time.Millisecond}, {"x-ms-retry-after-ms", time.Millisecond}, {"Retry-After", time.Second}} {
			d, ok := parseRetryAfter(header(tc.field, s), now)
			if d < 0 || d > maxHint {
				t.Fatalf("%s %q: %v", tc.field, s, d)
			}
			v := strings.TrimSpace(s)
			if !isNumber(v) {
				// The millisecond fields' members, split at commas,
				// are read each (see members).
				if ok && tc.unit == time.Millisecond && !strings.Contains(s, ",") {
					t.Fatalf("%s %q: %v, want malformed", tc.field, s, d)
				}
				continue
			}
			if !ok {
				t.Fatalf("%s %q: malformed, want a wait", tc.field, s)
			}
			f, err := strconv.ParseFloat(v, 64)
			if errors.Is(err, strconv.ErrRange) {
				if d != maxHint {
					t.Fatalf("%s %q: %v, want maxHint", tc.field, s, d)
				}
				continue
			}
			want := f * float64(tc.unit)
			if want >= float64(maxHint) {
				if d != maxHint && float64(d) < want*(1-1e-15) {
					t.Fatalf("%s %q: %v, want maxHint", tc.field, s, d)
				}
				continue
			}
			// ParseFloat rounds to 53 bits: allow for that.
			if slack := want * 1e-15; float64(d) < want-slack || float64(d) > want+1+slack {
				t.Fatalf("%s %q: %v, want %v ns, rounded up", tc.field, s, d, want)
			}
		}
	})
}
