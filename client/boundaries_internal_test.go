package client

import (
	"net/http"
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

// A quota's size is the smallest valid one among its lines: an invalid
// line before a valid one is skipped, not the end of the field.
func TestServerHoldQuotaSkipsInvalidLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    http.Header
	}{
		{"OpenAI", header("X-Ratelimit-Remaining-Requests", "0", "X-Ratelimit-Reset-Requests", "10s",
			"X-Ratelimit-Limit-Requests", "many", "X-Ratelimit-Limit-Requests", "2")},
		{"Anthropic", header("Anthropic-Ratelimit-Requests-Remaining", "0", "Anthropic-Ratelimit-Requests-Reset", now.Add(10*time.Second).Format(time.RFC3339),
			"Anthropic-Ratelimit-Requests-Limit", "-1, 2")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := serverHold(tc.h, now); got != 5*time.Second {
				t.Errorf("serverHold = %v, want 5s (a 10s reset over a quota of 2)", got)
			}
		})
	}
}
