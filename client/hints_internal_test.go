package client

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func TestServerHold(t *testing.T) {
	unix := func(d time.Duration) string { return strconv.FormatInt(now.Add(d).Unix(), 10) }
	for _, tc := range []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		// IETF draft -08 .. -11: a List of named policies.
		{"ietf", header("RateLimit", `"default";r=0;t=5`), 5 * time.Second},
		{"ietf quota left", header("RateLimit", `"default";r=3;t=5`), 0},
		{"ietf several", header("RateLimit", `"sec";r=3;t=1, "day";r=0;t=7, "hour";r=0;t=4`), 7 * time.Second},
		{"ietf split lines", header("RateLimit", `"sec";r=3;t=1`, "RateLimit", `"day";r=0;t=9`), 9 * time.Second},
		{"ietf spaces", header("RateLimit", `"a"; r=0; t=6 ,  "b";r=1`), 6 * time.Second},
		{"ietf pk and comments", header("RateLimit", `"u";r=0;t=3;pk=:cHsdsRa894==:;acme-x="y"`), 3 * time.Second},
		{"ietf no t, policy w", header("RateLimit", `"min";r=0`, "RateLimit-Policy", `"sec";q=1;w=1, "min";q=10;w=60`), time.Minute},
		{"ietf no t, no policy", header("RateLimit", `"min";r=0`), 0},
		{"ietf t=0", header("RateLimit", `"a";r=0;t=0`), 0},
		{"ietf r=-0 is zero", header("RateLimit", `"a";r=-0;t=5`), 5 * time.Second},
		{"ietf r=00 is zero", header("RateLimit", `"a";r=00;t=5`), 5 * time.Second},
		{"ietf r boolean", header("RateLimit", `"a";r;t=5`), 0},
		{"ietf r decimal", header("RateLimit", `"a";r=0.0;t=5`), 0},
		{"ietf t decimal", header("RateLimit", `"a";r=0;t=5.5`), 0},
		{"ietf name not a string", header("RateLimit", `"a";r=0;t=2, b;r=0;t=50`), 2 * time.Second},
		{"ietf display string", header("RateLimit", `"u";r=0;t=3;acme-n=%"f%c3%bcr \\ 100%25"`), 3 * time.Second},
		{"ietf pk unpadded", header("RateLimit", `"u";r=0;t=3;pk=:aGVsbG8:`), 3 * time.Second},
		{"ietf pk empty", header("RateLimit", `"u";r=0;t=3;pk=::`), 3 * time.Second},
		{"ietf huge t saturates", header("RateLimit", `"a";r=0;t=999999999999999`), maxHint},
		// Empty elements are skipped (RFC 9110 §5.6.1).
		{"ietf trailing comma", header("RateLimit", `"default";r=0;t=5,`), 5 * time.Second},
		{"ietf empty member", header("RateLimit", `"default";r=0;t=5,,"b";r=0;t=6`), 6 * time.Second},
		{"ietf empty line", header("RateLimit", "", "RateLimit", `"default";r=0;t=30`), 30 * time.Second},
		// draft-7: a Dictionary.
		{"draft7", header("RateLimit", `limit=10, remaining=0, reset=4`), 4 * time.Second},
		{"draft7 left", header("RateLimit", `limit=10, remaining=2, reset=4`), 0},
		{"draft7 no reset", header("RateLimit", `limit=10, remaining=0`), 0},
		{"draft7 duplicate key, last wins", header("RateLimit", `remaining=5, reset=4, remaining=0`), 4 * time.Second},
		{"draft7 last reset not an Integer", header("RateLimit", `limit=10, remaining=0, reset=4, reset="x"`), 0},
		{"draft7 last remaining not an Integer", header("RateLimit", `remaining=0, reset=4, remaining=?1`), 0},
		{"draft7 last remaining a Decimal", header("RateLimit", `remaining=0, reset=4, remaining=0.0`), 0},
		// draft-6: separate fields.
		{"draft6", header("RateLimit-Limit", "10", "RateLimit-Remaining", "0", "RateLimit-Reset", "3"), 3 * time.Second},
		{"draft6 left", header("RateLimit-Remaining", "1", "RateLimit-Reset", "3"), 0},
		{"draft6 no reset", header("RateLimit-Remaining", "0"), 0},
		{"draft6 two values", header("RateLimit-Remaining", "0", "RateLimit-Reset", "3", "RateLimit-Reset", "4"), 4 * time.Second},
		// legacy X-RateLimit-*.
		{"legacy delta", header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "2"), 2 * time.Second},
		{"legacy delta fraction", header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1.5"), 1500 * time.Millisecond},
		{"legacy unix", header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", unix(9*time.Second)), 9 * time.Second},
		{"legacy unix past", header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", unix(-time.Hour)), 0},
		{"legacy unix ms", header("X-RateLimit-Remaining", "00", "X-RateLimit-Reset", strconv.FormatInt(now.Add(2500*time.Millisecond).UnixMilli(), 10)), 2500 * time.Millisecond},
		{"legacy left", header("X-RateLimit-Remaining", "10", "X-RateLimit-Reset", "2"), 0},
		// The longest of several profiles.
		{"mixed", header("RateLimit", `"a";r=0;t=2`, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "8"), 8 * time.Second},
		// Cached responses are ignored.
		{"cached", header("Age", "12", "RateLimit", `"a";r=0;t=5`), 0},
		{"age zero", header("Age", "0", "RateLimit", `"a";r=0;t=5`), 5 * time.Second},
		{"none", header(), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := serverHold(tc.h, now); got != tc.want {
				t.Errorf("serverHold(%v) = %v, want %v", tc.h, got, tc.want)
			}
		})
	}
}

// Malformed fields are ignored entirely: no hold, no panic.
func TestServerHoldMalformed(t *testing.T) {
	for _, h := range []http.Header{
		header("RateLimit", `"default";r=0;t=`),
		header("RateLimit", `"default";r=0;t=-5`),
		header("RateLimit", `"default";r=-0;t=5;`),
		header("RateLimit", `"default;r=0;t=5`),
		header("RateLimit", `"default";r=0;t=5 "b";r=0;t=6`),
		header("RateLimit", `"default";R=0;T=5`),
		header("RateLimit", `"default";r=0;t=1234567890123456`),
		header("RateLimit", `"déf";r=0;t=5`),
		header("RateLimit", `"a\x";r=0;t=5`),
		header("RateLimit", `("a" "b");r=0;t=5`),
		// RFC 9651 §4.2.10: a Display String's %-escapes are two lowercase
		// hex digits and the octets UTF-8.
		header("RateLimit", `"a";r=0;t=5;x=%"%zz"`),
		header("RateLimit", `"a";r=0;t=5;x=%"%C3%A9"`),
		header("RateLimit", `"a";r=0;t=5;x=%"%c3"`),
		header("RateLimit", `"a";r=0;t=5;x=%"ok %c3a%a9"`), // ASCII inside a two-octet sequence
		header("RateLimit", `"a";r=0;t=5;x=%"%4"`),
		header("RateLimit", `"a";r=0;t=5;x=%"%`),
		// RFC 9651 §4.2.7: a Byte Sequence must decode as base64.
		header("RateLimit", `"a";r=0;t=5;pk=:=:`),
		header("RateLimit", `"a";r=0;t=5;pk=:a:`),
		header("RateLimit", `"a";r=0;t=5;pk=:aGVsbG8=aGVs:`),
		header("RateLimit", `"a";r=0;t=5;pk=:aGVsbA===:`),
		header("RateLimit", `"a";r=0;t=5;pk=:aGVsbG8==:`),
		header("RateLimit", `"a";r=0;t=5;pk=:aGVs====:`),
		header("RateLimit", `limit=10, remaining=zero, reset=4`),
		header("RateLimit", `limit=10, remaining=0, reset=-4`),
		header("RateLimit", `Limit=10, remaining=0, reset=4`),
		header("RateLimit", `remaining=0 reset=4`),
		header("RateLimit", `r=0;t=5`),
		header("RateLimit", `=`),
		header("RateLimit", `"`),
		header("RateLimit-Remaining", "0", "RateLimit-Reset", "soon"),
		header("RateLimit-Remaining", "0", "RateLimit-Reset", "-3"),
		header("RateLimit-Remaining", "none", "RateLimit-Reset", "3"),
		header("RateLimit-Remaining", "0", "RateLimit-Reset", "3;w=1"),
		header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "abc"),
		header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "-5"),
		header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1e400"),
		header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "NaN"),
		header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "Inf"),
		header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "1."),
		header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "99999999999999999999"),
		header("X-RateLimit-Remaining", "-0", "X-RateLimit-Reset", "5"),
		header("X-RateLimit-Remaining", "", "X-RateLimit-Reset", "5"),
	} {
		if got := serverHold(h, now); got != 0 {
			t.Errorf("serverHold(%q) = %v, want 0 (ignored)", h, got)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want time.Duration
		ok   bool
	}{
		{"0", 0, true},
		{"120", 2 * time.Minute, true},
		{" 7 ", 7 * time.Second, true},
		{"99999999999999999999", maxHint, true},
		{now.Add(30 * time.Second).Format(http.TimeFormat), 30 * time.Second, true},
		{now.Add(-30 * time.Second).Format(http.TimeFormat), 0, true},
		{now.Add(5 * time.Second).Format(time.RFC850), 5 * time.Second, true},
		{now.Add(5 * time.Second).Format(time.ANSIC), 5 * time.Second, true},
		{"", 0, false},
		{"-1", 0, false},
		{"tomorrow", 0, false},
		{"+5", 0, false},
		// A decimal, not RFC 9110's delay-seconds but what a server means
		// by it: that many seconds, rounded up to the nanosecond (never
		// shorter than asked), saturating as delay-seconds do.
		{"1.5", 1500 * time.Millisecond, true},
		{" 0.25 ", 250 * time.Millisecond, true},
		{"2.000", 2 * time.Second, true},
		{"1.0000000001", time.Second + time.Nanosecond, true},
		{"0.0000000001", time.Nanosecond, true},
		{"0.0", 0, true},
		{"99999999999999999999.5", maxHint, true},
		{"31536000.5", maxHint, true},
		// Still malformed: a unit, a sign, an exponent, no digits on a
		// side of the point, a comma, words.
		{"1.5s", 0, false},
		{"-1.5", 0, false},
		{"+1.5", 0, false},
		{"1e9", 0, false},
		{"1.5e3", 0, false},
		{"nan", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"1.", 0, false},
		{".5", 0, false},
		{"1.5.5", 0, false},
		{"0x1p3", 0, false},
		{"1 .5", 0, false},
		// A comma joins lines (a proxy's, RFC 9110 §5.3): each member is
		// read, the longest wait wins ("1,5" is never shorter than a
		// decimal comma's 1.5s), but for a number with thousands
		// separators and an HTTP-date's own comma.
		{"1,5", 5 * time.Second, true},
		{"1,000", 1000 * time.Second, true},
		{"soon, later", 0, false},
		{now.Add(5*time.Second).Format(http.TimeFormat) + ", " + now.Add(30*time.Second).Format(http.TimeFormat), 30 * time.Second, true},
	} {
		got, ok := parseRetryAfter(header("Retry-After", tc.v), now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tc.v, got, ok, tc.want, tc.ok)
		}
	}
}

// An absolute time in a response (an HTTP-date Retry-After, a Unix-time
// X-RateLimit-Reset) is written in the server's clock: when the response's
// Date shows the local clock out of step with it, the wait is counted from
// Date, so that a skewed client neither retries at once nor waits for the
// skew; a clock in step (within Date's second and a second of transit)
// counts from now, to the sub-second.
func TestAbsoluteTimesFollowTheServersDate(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 400e6, time.UTC)
	for _, tc := range []struct {
		name  string
		date  time.Time // the server's clock
		local bool      // the wait counts from now, not from Date
	}{
		{"client ten minutes ahead", now.Add(-10 * time.Minute), false},
		{"client ten minutes behind", now.Add(10 * time.Minute), false},
		{"client an hour behind", now.Add(time.Hour), false},
		{"client five seconds ahead", now.Add(-5 * time.Second), false},
		{"in step, Date a second and a half old", now.Add(-1500 * time.Millisecond), true},
		{"in step, Date of the same second", now, true},
		{"in step, Date half a second ahead", now.Add(500 * time.Millisecond), true},
	} {
		date := tc.date.Truncate(time.Second)
		at := date.Add(30 * time.Second)
		want := 30 * time.Second
		if tc.local {
			want = at.Sub(now)
		}
		h := header("Date", date.Format(http.TimeFormat))
		h.Set("Retry-After", at.Format(http.TimeFormat))
		if got, ok := parseRetryAfter(h, now); !ok || got != want {
			t.Errorf("%s: Retry-After wait %v, %v; want %v", tc.name, got, ok, want)
		}
		h = header("Date", date.Format(http.TimeFormat))
		h.Set("X-RateLimit-Remaining", "0")
		h.Set("X-RateLimit-Reset", strconv.FormatInt(at.Unix(), 10))
		if got := legacyHold(h, now); got != want {
			t.Errorf("%s: X-RateLimit-Reset wait %v; want %v", tc.name, got, want)
		}
	}
	// A response from a cache: the server's clock read Date when it was
	// made, and Age seconds have passed since (RFC 9111 §4.2.3).
	date := now.Add(-10 * time.Minute).Truncate(time.Second)
	h := header("Date", date.Format(http.TimeFormat), "Age", "300")
	h.Set("Retry-After", date.Add(330*time.Second).Format(http.TimeFormat))
	if got, ok := parseRetryAfter(h, now); !ok || got != 30*time.Second {
		t.Errorf("Age 300: Retry-After wait %v, %v; want 30s", got, ok)
	}
	// Without Date, or with one that does not parse, the local clock it is.
	for _, date := range []string{"", "yesterday"} {
		h := header("Retry-After", now.Add(-10*time.Minute).Add(30*time.Second).Format(http.TimeFormat))
		if date != "" {
			h.Set("Date", date)
		}
		if got, ok := parseRetryAfter(h, now); !ok || got != 0 {
			t.Errorf("Date %q: wait %v, %v; want 0 (a date in the past)", date, got, ok)
		}
	}
}

// Empty elements of a List or Dictionary (leading, doubled or trailing
// commas) are skipped, as RFC 9110 §5.6.1 asks, not malformed as RFC 9651
// has them; they count among the maxSFMembers elements a field may have.
func TestParseSFEmptyElements(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		list bool // a List, else a Dictionary
	}{
		{`, "a",, "b" ,`, 2, true},
		{`,`, 0, true},
		{` , ,`, 0, true},
		{"\"a\",\t,\t\"b\"", 2, true},
		{strings.Repeat(",", maxSFMembers-1) + `"a"`, 1, true},
		{`"a"` + strings.Repeat(",", maxSFMembers-1), 1, true},
		{`,a=1,, b ,`, 2, false},
		{strings.Repeat(",", maxSFMembers-1) + `a=1`, 1, false},
	} {
		parse := parseSFDict
		if tc.list {
			parse = parseSFList
		}
		if members, ok := parse(tc.s); !ok || len(members) != tc.n {
			t.Errorf("parse(%.40q) = %d members, %v; want %d, true", tc.s, len(members), ok, tc.n)
		}
	}
	for _, s := range []string{
		strings.Repeat(",", maxSFMembers) + `"a"`,
		`"a"` + strings.Repeat(",", maxSFMembers),
		`"a" ,, "b" "c"`,
	} {
		if _, ok := parseSFList(s); ok {
			t.Errorf("parseSFList(%.40q) ok, want malformed", s)
		}
	}
}

func TestParseSF(t *testing.T) {
	members, ok := parseSFList(`"a";q=10;w=1, tok;x, ?0, :aGVsbG8=:, -12.345, @1700000000, %"x", ("b" 1);p=2`)
	if !ok || len(members) != 8 {
		t.Fatalf("parseSFList: ok %v, %d members", ok, len(members))
	}
	kinds := []sfKind{sfString, sfToken, sfBoolean, sfBytes, sfDecimal, sfDate, sfDisplay, sfInner}
	for i, k := range kinds {
		if members[i].item.kind != k {
			t.Errorf("member %d kind %d, want %d", i, members[i].item.kind, k)
		}
	}
	if w, ok := members[0].item.param("w"); !ok || w.num != 1 {
		t.Errorf("w = %+v", w)
	}
	if x, ok := members[1].item.param("x"); !ok || x.kind != sfBoolean || x.num != 1 {
		t.Errorf("bare parameter = %+v", x)
	}
	if _, ok := parseSFList(""); !ok {
		t.Error("empty list rejected")
	}
	d, ok := parseSFDict(`a=1, b, c=(1 2)`)
	if !ok || len(d) != 3 || d[1].key != "b" || d[1].item.kind != sfBoolean {
		t.Errorf("parseSFDict = %+v, %v", d, ok)
	}
}

// FuzzServerHold checks that no rate-limit field, in any dialect, makes the
// parser panic or return a hold outside [0, maxHint].
func FuzzServerHold(f *testing.F) {
	for _, s := range []string{
		`"default";r=0;t=5`, `"a";r=0, "b";r=1;t=2`, `limit=10, remaining=0, reset=4`,
		`("a" "b");r=0`, `"a";r=0;t=999999999999999`, `"\"`, `%"x"`, `@-1`, `:=:`,
		`, "a";r=0;t=5,,`, `,remaining=0,, reset=3,`,
		`"a";r=0;t=5, remaining=0, reset=4`, `remaining=0, "a";r=1, reset=`,
	} {
		f.Add(s, `"a";q=1;w=60`, "0", "5")
	}
	f.Add(`"a";r=1`, `,"a";q=1;w=60,`, "0, 0", "3, 7;w=1, -1")
	// Plain values joined by a proxy, among them an RFC 3339 instant with
	// a comma before its fraction of a second.
	f.Add(`"a";r=1`, "60, 2", "5, 0", "3s, 1s")
	f.Add(`"a";r=1`, ",4,", " 0 ,", "2026-03-01T12:00:30,5Z, 2026-03-01T12:00:10Z")
	f.Add(`"a";r=1`, "50", "0,", "1000000000999, 2,, 1.5")
	for _, reset := range []string{"6m0s", "1h2m3.5s", "20ms", "Sun, 01 Mar 2026 12:00:30 GMT", "Sunday, 01-Mar-26 12:00:30 GMT", "2026-03-01T12:00:30Z", "2026-03-01T12:00:30.25+01:00", "1e3", "9999999999999999999h"} {
		f.Add(`"a";r=1`, "60", "0", reset)
	}
	f.Fuzz(func(t *testing.T, rl, policy, remaining, reset string) {
		// policy doubles as the vendors' limit fields, reset as every
		// reset and wait.
		h := header("RateLimit", rl, "RateLimit-Policy", policy,
			"RateLimit-Remaining", remaining, "RateLimit-Reset", reset,
			"X-RateLimit-Remaining", remaining, "X-RateLimit-Reset", reset, "Retry-After", reset,
			"X-Rate-Limit-Remaining", remaining, "X-Rate-Limit-Reset", reset,
			"retry-after-ms", reset, "x-ms-retry-after-ms", reset,
			"x-ratelimit-limit-requests", policy, "x-ratelimit-remaining-requests", remaining, "x-ratelimit-reset-requests", reset,
			"anthropic-ratelimit-requests-limit", policy, "anthropic-ratelimit-requests-remaining", remaining,
			"anthropic-ratelimit-requests-reset", reset,
			"X-RateLimit-Limit", policy, "X-RateLimit-Increment", remaining)
		// Every field again in a second line, with another value.
		for k, v := range h.Clone() {
			switch v[0] {
			case reset:
				h.Add(k, remaining)
			default:
				h.Add(k, reset)
			}
		}
		if d := serverHold(h, now); d < 0 || d > maxHint {
			t.Fatalf("serverHold = %v", d)
		}
		if d, _ := parseRetryAfter(h, now); d < 0 || d > maxHint {
			t.Fatalf("parseRetryAfter = %v", d)
		}
		neverFits(h) // no panic
	})
}

// A RateLimit List member whose name is not a String is invalid and
// ignored, wherever it stands: the members after it still count, in the
// first field line or a later one, and a draft-7 Dictionary is still read
// as one.
func TestServerHoldInvalidLeadingMember(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"token first", header("RateLimit", `b;r=0;t=50, "a";r=0;t=2`), 2 * time.Second},
		{"token last", header("RateLimit", `"a";r=0;t=2, b;r=0;t=50`), 2 * time.Second},
		{"integer first", header("RateLimit", `10;w=1, "a";r=0;t=2`), 2 * time.Second},
		{"inner list first", header("RateLimit", `("x" "y");r=0;t=50, "a";r=0;t=3`), 3 * time.Second},
		{"byte sequence first", header("RateLimit", `:eA==:;r=0;t=50, "a";r=0;t=4`), 4 * time.Second},
		{"token line first", header("RateLimit", `b;r=0;t=50`, "RateLimit", `"a";r=0;t=5`), 5 * time.Second},
		{"only invalid members", header("RateLimit", `b;r=0;t=50, c;r=0;t=9`), 0},
		{"draft7 still", header("RateLimit", `limit=10, remaining=0, reset=6`), 6 * time.Second},
		{"draft7 boolean first", header("RateLimit", `x, remaining=0, reset=7`), 7 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := serverHold(tc.h, now); got != tc.want {
				t.Errorf("serverHold(%q) = %v, want %v", tc.h, got, tc.want)
			}
		})
	}
}

// A RateLimit field that mixes the drafts' syntaxes, draft -08's List
// members ("name";r=;t=) and draft-7's Dictionary members (key=value), is
// neither a List nor a Dictionary, and RFC 9651 would have it ignored
// whole; but each member is plainly one or the other: two layers, a
// gateway and the application, each wrote its own draft, in a line of its
// own or joined into one. Each member is read in the syntax it parses in,
// and the longer hold of the two drafts counts, as for the other dialects
// (each may describe a different limit). A member that is neither still
// makes the field malformed, and ignored. (The mixed field was ignored
// whole: no hold from either layer.)
func TestServerHoldMixedDrafts(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"-08 line held, draft-7 line not", header("RateLimit", `"default";r=0;t=2`, "RateLimit", `limit=5, remaining=3, reset=1`), 2 * time.Second},
		{"draft-7 line held, -08 line not", header("RateLimit", `"default";r=3;t=1`, "RateLimit", `limit=5, remaining=0, reset=2`), 2 * time.Second},
		{"both held, the longer", header("RateLimit", `limit=5, remaining=0, reset=4`, "RateLimit", `"a";r=0;t=9`), 9 * time.Second},
		{"neither held", header("RateLimit", `"a";r=1;t=9`, "RateLimit", `limit=5, remaining=1, reset=4`), 0},
		{"one line", header("RateLimit", `limit=5, remaining=0, reset=2, "default";r=1;t=1`), 2 * time.Second},
		{"one line, -08 held", header("RateLimit", `"default";r=0;t=3, limit=5, remaining=2, reset=9`), 3 * time.Second},
		{"-08 without t, RateLimit-Policy's w", header("RateLimit", `"min";r=0, remaining=1, reset=2`, "RateLimit-Policy", `"min";q=5;w=60`), time.Minute},
		{"draft-7 members across lines", header("RateLimit", `remaining=0`, "RateLimit", `"a";r=1;t=1`, "RateLimit", `reset=4`), 4 * time.Second},
		{"draft-7 last member wins", header("RateLimit", `remaining=0, reset=4, "a";r=1;t=1, remaining=2`), 0},
		{"draft-7 member with parameters", header("RateLimit", `"a";r=1, remaining=0;x=1, reset=6;y`), 6 * time.Second},
		{"empty lines and members", header("RateLimit", "", "RateLimit", `, "a";r=0;t=3,, remaining=1,`), 3 * time.Second},
		// A Token alone parses as both a List member and a Dictionary
		// key: it is read as a List member, which names no policy.
		{"a lone key is a List member", header("RateLimit", `"a";r=0;t=3, remaining=0, reset=5, remaining`), 5 * time.Second},
		// Neither a List member nor a Dictionary member: malformed.
		{"a member neither", header("RateLimit", `"a";r=0;t=3, remaining=0, reset=5, Remaining=1`), 0},
		{"an unterminated String", header("RateLimit", `remaining=0, reset=5, "a;r=0;t=3`), 0},
		{"a key with a bad value", header("RateLimit", `"a";r=0;t=3, reset=?2`), 0},
		{"two members without a comma", header("RateLimit", `"a";r=0;t=3 remaining=0, reset=5`), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := serverHold(tc.h, now); got != tc.want {
				t.Errorf("serverHold(%q) = %v, want %v", tc.h, got, tc.want)
			}
		})
	}
}

// Age is delta-seconds (RFC 9111 §5.1): "00" is 0, a list keeps its first
// member, and an invalid value is ignored, as if absent. Only a response
// that is really stale has its RateLimit fields ignored.
func TestServerHoldAge(t *testing.T) {
	const ratelimit = `"a";r=0;t=5`
	for _, tc := range []struct {
		age  []string
		want time.Duration
	}{
		{[]string{"0"}, 5 * time.Second},
		{[]string{"00"}, 5 * time.Second},
		{[]string{" 0 "}, 5 * time.Second},
		{[]string{"0, 30"}, 5 * time.Second},
		{[]string{"0", "30"}, 5 * time.Second},
		{[]string{"30, 0"}, 0},
		{[]string{"30"}, 0},
		{[]string{"1"}, 0},
		{[]string{"007"}, 0},
		{[]string{"99999999999999999999999"}, 0},
		{[]string{"-1"}, 5 * time.Second},
		{[]string{"abc"}, 5 * time.Second},
		{[]string{"1.5"}, 5 * time.Second},
		{[]string{""}, 5 * time.Second},
	} {
		h := header("RateLimit", ratelimit)
		for _, a := range tc.age {
			h.Add("Age", a)
		}
		if got := serverHold(h, now); got != tc.want {
			t.Errorf("Age %q: serverHold = %v, want %v", tc.age, got, tc.want)
		}
	}
}

// TestGrouped: only one to three digits followed by groups of a comma and
// three digits read as one number.
func TestGrouped(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"1,000", "1000"}, {"12,345,678", "12345678"}, {"999,999", "999999"}, {"0,000", "0000"},
		{"1000", ""}, {"1,00", ""}, {",000", ""}, {"1234,000", ""}, {"1,000,", ""}, {"1,0000", ""},
		{"1,000,00", ""}, {"1,a00", ""}, {"1,00a", ""}, {"1,000,00a", ""}, {"1, 000", ""}, {"5,0", ""}, {"", ""}, {",", ""}, {"a,000", ""},
	} {
		got, ok := grouped(tc.in)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("grouped(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
}

// TestFirstMemberNoGrouping: a list-based field (Age) has no thousands
// separators: "1,000" is the members 1 and 000, the first is 1.
func TestFirstMemberNoGrouping(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  string
	}{
		{[]string{"1,000"}, "1"}, {[]string{"", " , 7,000"}, "7"}, {[]string{"12"}, "12"}, {nil, ""},
	} {
		if got := firstMember(tc.lines); got != tc.want {
			t.Errorf("firstMember(%q) = %q, want %q", tc.lines, got, tc.want)
		}
	}
}

// neverFits, as serverHold, takes nothing from a cached response (an Age
// above 0; see cached): its fields were the server's answer to another
// request, at another time, and this one is retried. An Age of 0 or an
// invalid one is no cached response.
func TestNeverFitsCached(t *testing.T) {
	for _, tc := range []struct {
		age  string
		want bool
	}{
		{"", true},
		{"0", true},
		{"30", false},
		{"soon", true},
	} {
		h := header("X-RateLimit-Limit", "5", "X-RateLimit-Increment", "10")
		if tc.age != "" {
			h.Set("Age", tc.age)
		}
		if got := neverFits(h); got != tc.want {
			t.Errorf("Age %q: neverFits = %v, want %v", tc.age, got, tc.want)
		}
	}
}
