package client

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// exactly returns a RateLimit member saying no quota is left for 5 seconds,
// padded with a parameter to exactly n bytes.
func exactly(t *testing.T, n int) string {
	t.Helper()
	const head, tail = `"z";r=0;t=5;p="`, `"`
	if n < len(head)+len(tail) {
		t.Fatalf("exactly(%d): too short", n)
	}
	return head + strings.Repeat("a", n-len(head)-len(tail)) + tail
}

// A RateLimit or RateLimit-Policy field of exactly 64 KiB, its lines joined
// with ", ", is read, and one byte more is ignored: the documented bound,
// to the byte.
func TestServerHoldFieldOf64KiBReadOneMoreIgnored(t *testing.T) {
	const limit = 64 << 10
	for _, tc := range []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"RateLimit of 64 KiB", header("RateLimit", exactly(t, limit)), 5 * time.Second},
		{"RateLimit of 64 KiB + 1", header("RateLimit", exactly(t, limit+1)), 0},
		// Two lines of 32 KiB - 1: 64 KiB with the ", " between them.
		{"RateLimit in two lines of 64 KiB joined", header("RateLimit", `"b";p="`+strings.Repeat("a", limit/2-9)+`"`, "RateLimit", exactly(t, limit/2-1)), 5 * time.Second},
		{"RateLimit in two lines of 64 KiB + 1 joined", header("RateLimit", `"b";p="`+strings.Repeat("a", limit/2-8)+`"`, "RateLimit", exactly(t, limit/2-1)), 0},
		{"RateLimit-Policy of 64 KiB", header("RateLimit", `"z";r=0`, "RateLimit-Policy", `"z";q=1;w=5;p="`+strings.Repeat("a", limit-16)+`"`), 5 * time.Second},
		{"RateLimit-Policy of 64 KiB + 1", header("RateLimit", `"z";r=0`, "RateLimit-Policy", `"z";q=1;w=5;p="`+strings.Repeat("a", limit-15)+`"`), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n := len(strings.Join(tc.h.Values("RateLimit"), ", ")); tc.h.Get("RateLimit-Policy") == "" && n != limit && n != limit+1 {
				t.Fatalf("field of %d bytes", n)
			}
			if got := serverHold(tc.h, now); got != tc.want {
				t.Errorf("serverHold = %v, want %v", got, tc.want)
			}
		})
	}
}

// The shortest hold a server can ask for, a Retry-After of one nanosecond
// (retry-after-ms 0.000001), holds the key for that nanosecond: only a wait
// of 0 is no hold.
func TestObserveHoldsForOneNanosecond(t *testing.T) {
	tr, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	tr.Observe("a", header("Retry-After-Ms", "0.000001"), now)
	if got := tr.holds.remaining("a", now); got != time.Nanosecond {
		t.Errorf("held for %v, want 1ns", got)
	}
	if got := tr.firm.remaining("a", now); got != time.Nanosecond {
		t.Errorf("firmly held for %v, want 1ns", got)
	}
	tr.Observe("b", header("Retry-After-Ms", "0"), now)
	if _, ok := tr.holds.m["b"]; ok {
		t.Error("a Retry-After of 0 set a hold")
	}
}

// A line written with thousands separators is one number, and the lines
// after it are read too: a gateway's "1,000" left does not hide the
// application's 0, whose reset then holds.
func TestServerHoldGroupedLineThenZero(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    http.Header
	}{
		{"X-RateLimit", header("X-RateLimit-Remaining", "1,000", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "5")},
		{"OpenAI", header("X-Ratelimit-Remaining-Requests", "12,000", "X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Reset-Requests", "5s")},
		{"OpenAI limit", header("X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Reset-Requests", "10s",
			"X-Ratelimit-Limit-Requests", "1,000", "X-Ratelimit-Limit-Requests", "2")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := serverHold(tc.h, now); got != 5*time.Second {
				t.Errorf("serverHold = %v, want 5s", got)
			}
		})
	}
}

// A quota's size is the smallest positive one among its lines: an invalid
// line before a valid one is skipped, not the end of the field; a size of
// 0 is none, and so is one too large for an int64 (not a quota that makes
// the share of the reset a nanosecond).
func TestServerHoldQuotaSkipsInvalidLines(t *testing.T) {
	reset := func(limits ...string) http.Header {
		h := header("X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Reset-Requests", "10s")
		for _, l := range limits {
			h.Add("X-Ratelimit-Limit-Requests", l)
		}
		return h
	}
	for _, tc := range []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"OpenAI", reset("many", "2"), 5 * time.Second},
		{"Anthropic", header("Anthropic-Ratelimit-Requests-Remaining", "0", "Anthropic-Ratelimit-Requests-Reset", now.Add(10*time.Second).Format(time.RFC3339),
			"Anthropic-Ratelimit-Requests-Limit", "-1, 2"), 5 * time.Second},
		{"zero after a size", reset("2", "0"), 5 * time.Second},
		{"one after a size", reset("2", "1"), 10 * time.Second},
		{"too large for an int64", reset("99999999999999999999"), 10 * time.Second},
		{"too large, then a size", reset("99999999999999999999", "2"), 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := serverHold(tc.h, now); got != tc.want {
				t.Errorf("serverHold = %v, want %v (a 10s reset)", got, tc.want)
			}
		})
	}
}

// The local clock is in step with a response's Date from a second before
// it to less than three seconds after it (see skewBehind, skewAhead), to the
// nanosecond: within, absolute times count from now; without, from Date.
func TestServerNowSkewBoundaries(t *testing.T) {
	date := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		now   time.Time
		local bool
	}{
		{"3s after Date less 1ns", date.Add(3*time.Second - 1), true},
		{"3s after Date", date.Add(3 * time.Second), false},
		{"1s before Date", date.Add(-time.Second), true},
		{"1s and 1ns before Date", date.Add(-time.Second - 1), false},
	} {
		want := date
		if tc.local {
			want = tc.now
		}
		if got := serverNow(header("Date", date.Format(http.TimeFormat)), tc.now); !got.Equal(want) {
			t.Errorf("%s: serverNow = %v, want %v", tc.name, got, want)
		}
	}
}

// RateLimit-Policy's w stands in for a missing t only when it is a positive
// Integer: a Decimal, Boolean or Date w (whose number a careless reader
// would take) is no window, and a w of 1 is one second.
func TestServerHoldPolicyWindowOnlyPositiveInteger(t *testing.T) {
	for _, tc := range []struct {
		w    string
		want time.Duration
	}{
		{"1", time.Second},
		{"5", 5 * time.Second},
		{"5.5", 0},
		{"?1", 0},
		{"@5", 0},
		{`"5"`, 0},
		{"0", 0},
		{"-5", 0},
	} {
		h := header("RateLimit", `"z";r=0`, "RateLimit-Policy", `"z";q=1;w=`+tc.w)
		if got := serverHold(h, now); got != tc.want {
			t.Errorf("w=%s: serverHold = %v, want %v", tc.w, got, tc.want)
		}
	}
}

// A draft-7 RateLimit Dictionary without a remaining member says nothing
// about the quota left: its reset holds nothing.
func TestServerHoldDraft7WithoutRemaining(t *testing.T) {
	for _, v := range []string{`a=0, reset=4`, `limit=0, reset=4`, `remaining, reset=4, a=0`} {
		if got := serverHold(header("RateLimit", v), now); got != 0 {
			t.Errorf("RateLimit %s: serverHold = %v, want 0", v, got)
		}
	}
}

// X-RateLimit-Reset is delta-seconds below 1e9, Unix seconds from 1e9 and
// Unix milliseconds from 1e12, and no time from 1e15 (the year 33658), each
// threshold included: at each the reading changes, so a value there reads
// as the time it is (2001-09-09, long past: no hold) or as none. A number
// too large for a float64 is none either, not a hold of a nanosecond.
func TestLegacyResetThresholds(t *testing.T) {
	for _, tc := range []struct {
		reset string
		want  time.Duration
	}{
		{"999999999", maxHint}, // 31 years of delta-seconds, saturated
		{"1000000000", 0},      // Unix seconds: 2001
		{"999999999999", maxHint},
		{"1000000000000", 0}, // Unix milliseconds: 2001
		{"999999999999999", maxHint},
		{"1000000000000000", 0},
		{"1" + strings.Repeat("0", 400), 0},
		{"0.5", 500 * time.Millisecond},
		// Unix seconds keep their fraction.
		{strconv.FormatInt(now.Add(9*time.Second).Unix(), 10) + ".5", 9500 * time.Millisecond},
	} {
		h := header("X-RateLimit-Remaining", "0", "X-RateLimit-Reset", tc.reset)
		if got := serverHold(h, now); got != tc.want {
			t.Errorf("X-RateLimit-Reset %.20s: serverHold = %v, want %v", tc.reset, got, tc.want)
		}
	}
}

// No quota left without a reset (none, or none valid) holds nothing, in
// every dialect whose reset is a field of its own.
func TestServerHoldNoneLeftWithoutReset(t *testing.T) {
	for _, h := range []http.Header{
		header("Anthropic-Ratelimit-Requests-Remaining", "0"),
		header("Anthropic-Ratelimit-Requests-Remaining", "0", "Anthropic-Ratelimit-Requests-Reset", "soon"),
		header("X-Ratelimit-Remaining-Requests", "0"),
		header("X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Reset-Requests", "soon"),
		header("X-RateLimit-Remaining", "0"),
		header("X-Rate-Limit-Remaining", "0"),
		header("RateLimit-Remaining", "0"),
	} {
		if got := serverHold(h, now); got != 0 {
			t.Errorf("%v: serverHold = %v, want 0", h, got)
		}
	}
}
