package middleware_test

import (
	"context"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/middleware"
	"github.com/ratekeeper/ratekeeper/policy"
)

// fixedAnswer is a third-party store answering every check with the same
// decision, whatever it holds.
type fixedAnswer algorithms.Decision

func (s fixedAnswer) Take(_ context.Context, checks ...algorithms.Check) ([]algorithms.Decision, error) {
	ds := make([]algorithms.Decision, len(checks))
	for i := range ds {
		ds[i] = algorithms.Decision(s)
	}
	return ds, nil
}

// sfInt is a Structured Field Integer the drafts allow in the rate-limit
// fields: non-negative, at most 15 digits (RFC 9651).
const sfInt = `(0|[1-9][0-9]{0,14})`

// validFields are the fields each profile writes, as the drafts define
// them.
var validFields = map[middleware.Profile]map[string]*regexp.Regexp{
	middleware.IETF: {
		"RateLimit-Policy": regexp.MustCompile(`^"p";q=` + sfInt + `;w=` + sfInt + `$`),
		"RateLimit":        regexp.MustCompile(`^"p";r=` + sfInt + `;t=` + sfInt + `$`),
	},
	middleware.Draft7: {
		"RateLimit-Policy": regexp.MustCompile(`^` + sfInt + `;w=` + sfInt + `$`),
		"RateLimit":        regexp.MustCompile(`^limit=` + sfInt + `, remaining=` + sfInt + `, reset=` + sfInt + `$`),
	},
	middleware.Draft6: {
		"RateLimit-Policy":    regexp.MustCompile(`^` + sfInt + `;w=` + sfInt + `$`),
		"RateLimit-Limit":     regexp.MustCompile(`^` + sfInt + `$`),
		"RateLimit-Remaining": regexp.MustCompile(`^` + sfInt + `$`),
		"RateLimit-Reset":     regexp.MustCompile(`^` + sfInt + `$`),
	},
	middleware.Legacy: {
		"X-RateLimit-Limit":     regexp.MustCompile(`^` + sfInt + `$`),
		"X-RateLimit-Remaining": regexp.MustCompile(`^` + sfInt + `$`),
		"X-RateLimit-Reset":     regexp.MustCompile(`^` + sfInt + `$`),
	},
	middleware.LegacyUnix: {
		"X-RateLimit-Limit":     regexp.MustCompile(`^` + sfInt + `$`),
		"X-RateLimit-Remaining": regexp.MustCompile(`^` + sfInt + `$`),
		"X-RateLimit-Reset":     regexp.MustCompile(`^` + sfInt + `$`),
	},
}

// TestHeadersValidWhateverTheStoreSays: a third-party store may answer
// numbers out of the Decision's range (a negative Remaining, a negative
// or huge Limit, durations that are negative or near the largest
// Duration). The middleware writes every rate-limit field valid as the
// drafts define it (non-negative Integers of at most 15 digits) and a
// Retry-After of delay-seconds (at least 1 on a 429), in every profile,
// allowed or denied, and does not panic. Before, a Remaining of -1 was
// written as r=-1 (remaining=-1, ...), one of 2^63-1 as 19 digits, and a
// NextAfter or RetryAfter near the largest Duration wrapped around when
// rounded up to seconds: t=-9223372036, Retry-After: 1.
func TestHeadersValidWhateverTheStoreSays(t *testing.T) {
	huge := time.Duration(math.MaxInt64)
	var cases []algorithms.Decision
	for _, limit := range []int64{100, 0, -5, math.MinInt64, math.MaxInt64, 1_000_000_000_000_000} {
		for _, remaining := range []int64{-1, math.MinInt64, math.MaxInt64, 1_000_000_000_000_000, 50} {
			for _, dur := range []time.Duration{-time.Second, math.MinInt64, huge, huge - time.Second + 2, 1500 * time.Millisecond} {
				for _, allowed := range []bool{true, false} {
					d := algorithms.Decision{Allowed: allowed, Limit: limit, Remaining: remaining, NextAfter: dur, ResetAfter: dur}
					if !allowed {
						d.RetryAfter = dur
					}
					cases = append(cases, d)
				}
			}
		}
	}
	for p, fields := range validFields {
		for _, d := range cases {
			m := middleware.MustNew(fixedAnswer(d), []*policy.Policy{fixed("p", 100, time.Minute, remote)}, middleware.WithHeaders(p))
			w := serve(m.Handler(ok), "GET", "/")
			for name, re := range fields {
				if vs := w.Header().Values(name); len(vs) != 1 || !re.MatchString(vs[0]) {
					t.Errorf("%v, store answering %+v: %s: %q, want one value matching %s", p, d, name, vs, re)
				}
			}
			if !d.Allowed {
				if ra := w.Header().Get("Retry-After"); w.Code != 429 || !regexp.MustCompile(`^[1-9][0-9]*$`).MatchString(ra) {
					t.Errorf("%v, store answering %+v: %d Retry-After %q, want 429 with delay-seconds of at least 1", p, d, w.Code, ra)
				}
			}
		}
	}
}

// TestHeadersOutOfRangeValues: what the middleware writes for numbers out
// of range, byte for byte: a Remaining or Limit below 0 as 0, above the
// Integers' 15 digits as 999999999999999; a duration near the largest
// Duration rounded up to 9223372037 seconds, a negative one as 0.
func TestHeadersOutOfRangeValues(t *testing.T) {
	huge := time.Duration(math.MaxInt64)
	for _, tt := range []struct {
		name    string
		p       middleware.Profile
		d       algorithms.Decision
		headers map[string]string
	}{
		{"ietf negative remaining", middleware.IETF,
			algorithms.Decision{Allowed: true, Limit: 100, Remaining: -1, NextAfter: 1500 * time.Millisecond},
			map[string]string{"RateLimit": `"p";r=0;t=2`}},
		{"ietf huge remaining and next", middleware.IETF,
			algorithms.Decision{Allowed: true, Limit: 100, Remaining: math.MaxInt64, NextAfter: huge},
			map[string]string{"RateLimit": `"p";r=999999999999999;t=9223372037`}},
		{"ietf denied, huge wait", middleware.IETF,
			algorithms.Decision{Limit: 100, Remaining: math.MinInt64, RetryAfter: huge, NextAfter: -time.Second},
			map[string]string{"RateLimit": `"p";r=0;t=0`, "Retry-After": "9223372037"}},
		{"draft-7", middleware.Draft7,
			algorithms.Decision{Allowed: true, Limit: -5, Remaining: -7, ResetAfter: huge},
			map[string]string{"RateLimit": "limit=0, remaining=0, reset=9223372037"}},
		{"draft-6", middleware.Draft6,
			algorithms.Decision{Allowed: true, Limit: math.MaxInt64, Remaining: 1_000_000_000_000_000, ResetAfter: math.MinInt64},
			map[string]string{"RateLimit-Limit": "999999999999999", "RateLimit-Remaining": "999999999999999", "RateLimit-Reset": "0"}},
		{"legacy denied", middleware.Legacy,
			algorithms.Decision{Limit: 100, Remaining: -3, RetryAfter: huge},
			map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "9223372037", "Retry-After": "9223372037"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := middleware.MustNew(fixedAnswer(tt.d), []*policy.Policy{fixed("p", 100, time.Minute, remote)}, middleware.WithHeaders(tt.p))
			w := serve(m.Handler(ok), "GET", "/")
			for name, want := range tt.headers {
				if got := strings.Join(w.Header().Values(name), " | "); got != want {
					t.Errorf("%s: %q, want %q", name, got, want)
				}
			}
		})
	}
}
