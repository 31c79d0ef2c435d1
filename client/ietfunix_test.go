package client_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// The IETF drafts write every reset in delay-seconds: draft-6's
// RateLimit-Reset, draft-7's reset= and the t= of draft -08 to -11. Some
// servers put a Unix time there instead, as they do in the legacy
// X-RateLimit-Reset (express-rate-limit's legacy headers, httprate,
// GitHub). A value of 10^9 or more is no wait any server means (31 years
// and more): it is read as the legacy field is, a Unix time in seconds
// (milliseconds from 10^12 on) in the server's clock, so the hold ends at
// that instant, not a minute later (the cap) and half open for a year.
// Smaller values keep their meaning of delay-seconds, the largest of them
// cut to the maximum (a minute by default).
func TestIETFResetAsUnixTime(t *testing.T) {
	sec := func(d time.Duration) string { return strconv.FormatInt(t0.Add(d).Unix(), 10) }
	ms := func(d time.Duration) string { return strconv.FormatInt(t0.Add(d).UnixMilli(), 10) }
	for _, tc := range []struct {
		name string
		kv   []string
		want time.Duration
	}{
		{"draft-7 Unix seconds", []string{"RateLimit", "limit=10, remaining=0, reset=" + sec(9*time.Second)}, 9 * time.Second},
		{"draft-7 Unix milliseconds", []string{"RateLimit", "limit=10, remaining=0, reset=" + ms(9500*time.Millisecond)}, 9500 * time.Millisecond},
		{"draft-7 Unix seconds passed", []string{"RateLimit", "limit=10, remaining=0, reset=" + sec(-time.Hour)}, 0},
		{"draft-7 delay-seconds", []string{"RateLimit", "limit=10, remaining=0, reset=4"}, 4 * time.Second},
		{"draft-7 delay-seconds below 10^9, cut", []string{"RateLimit", "limit=10, remaining=0, reset=999999999"}, time.Minute},
		{"draft-11 t Unix seconds", []string{"RateLimit", `"default";r=0;t=` + sec(7*time.Second)}, 7 * time.Second},
		{"draft-11 t Unix milliseconds", []string{"RateLimit", `"default";r=0;t=` + ms(7250*time.Millisecond)}, 7250 * time.Millisecond},
		{"draft-11 t delay-seconds", []string{"RateLimit", `"default";r=0;t=5`}, 5 * time.Second},
		{"draft-6 Unix seconds", []string{"RateLimit-Remaining", "0", "RateLimit-Reset", sec(8 * time.Second)}, 8 * time.Second},
		{"mixed drafts, each Unix", []string{"RateLimit", `"a";r=0;t=` + sec(3*time.Second), "RateLimit", "remaining=0, reset=" + sec(11*time.Second)}, 11 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) { checkHold(t, tc.want, tc.kv...) })
	}
}

// A 429 without Retry-After whose RateLimit field names the reset as a
// Unix time is retried at that instant; before, the reset read as 55 years
// of delay-seconds was beyond the maximum, and the Transport gave up at
// once.
func TestRetryAtIETFUnixReset(t *testing.T) {
	for _, tc := range []struct {
		name  string
		field func(now time.Time) string
	}{
		{"draft-7", func(now time.Time) string {
			return fmt.Sprintf("limit=5, remaining=0, reset=%d", now.Add(6*time.Second).Unix())
		}},
		{"draft-11", func(now time.Time) string {
			return fmt.Sprintf(`"default";r=0;t=%d`, now.Add(6*time.Second).Unix())
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			retriedAtReset(t, func(h http.Header, now time.Time) { h.Set("RateLimit", tc.field(now)) })
		})
	}
}
