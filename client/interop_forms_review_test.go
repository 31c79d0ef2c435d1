package client_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// Header forms other servers send, end to end: the client's wait before
// its next request (a retry, or the next call) is exactly what the fields
// announce, counted from the local clock off the whole second (the
// server's Date in step with it).
func TestInteropOtherServersForms(t *testing.T) {
	const off = 400 * time.Millisecond // the local clock when the response comes
	unix := func(d time.Duration) string { return strconv.FormatInt(t0.Add(d).Unix(), 10) }
	for _, tc := range []struct {
		name   string
		status int
		kv     []string
		want   time.Duration // when the second request reaches the server
	}{
		// GitHub's primary limit: a 403 (or 429) with no quota left until
		// x-ratelimit-reset, Unix seconds; no Retry-After. The retry waits
		// for the reset (the backoff, 0 here, is shorter).
		{"GitHub primary 403", http.StatusForbidden, []string{"x-ratelimit-limit", "60", "x-ratelimit-remaining", "0", "x-ratelimit-used", "60", "x-ratelimit-resource", "core", "x-ratelimit-reset", unix(30 * time.Second)}, 30 * time.Second},
		{"GitHub primary 429", http.StatusTooManyRequests, []string{"x-ratelimit-remaining", "0", "x-ratelimit-reset", unix(12 * time.Second)}, 12 * time.Second},
		// GitHub's secondary limit: a 403 with retry-after.
		{"GitHub secondary 403", http.StatusForbidden, []string{"retry-after", "20", "x-ratelimit-remaining", "10", "x-ratelimit-reset", unix(3000 * time.Second)}, 20*time.Second + off},
		// A 200 that spends the last unit: the next call waits for the reset.
		{"GitHub last unit", http.StatusOK, []string{"x-ratelimit-remaining", "0", "x-ratelimit-reset", unix(45 * time.Second)}, 45 * time.Second},
		{"GitHub reset passed", http.StatusOK, []string{"x-ratelimit-remaining", "0", "x-ratelimit-reset", unix(-5 * time.Second)}, off},
		// A 403 with quota left is the server's answer: not retried, and
		// the next call goes at once.
		{"GitHub 403 not for rate", http.StatusForbidden, []string{"x-ratelimit-remaining", "59", "x-ratelimit-reset", unix(3000 * time.Second)}, off},
		// draft-6 fields (express-rate-limit, Kong), lower case, reset in
		// delta-seconds.
		{"draft-6 200", http.StatusOK, []string{"ratelimit-limit", "10", "ratelimit-remaining", "0", "ratelimit-reset", "12"}, 12*time.Second + off},
		{"draft-6 429", http.StatusTooManyRequests, []string{"ratelimit-limit", "10", "ratelimit-remaining", "0", "ratelimit-reset", "9"}, 9*time.Second + off},
		// legacy delta-seconds (our Legacy profile, go-chi/httprate's
		// X-RateLimit-Reset is Unix seconds: above).
		{"legacy delta", http.StatusOK, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "7"}, 7*time.Second + off},
		// sethvargo/go-limiter's httplimit sends X-RateLimit-Reset as an
		// HTTP-date (IMF-fixdate); the legacy field's other forms
		// (standards.md 1.5) include RFC 3339.
		{"legacy reset HTTP-date", http.StatusOK, []string{"X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", t0.Add(8 * time.Second).Format(http.TimeFormat)}, 8 * time.Second},
		{"legacy reset RFC 3339", http.StatusOK, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", t0.Add(6 * time.Second).Format(time.RFC3339)}, 6 * time.Second},
		{"X API reset HTTP-date", http.StatusOK, []string{"X-Rate-Limit-Remaining", "0", "X-Rate-Limit-Reset", t0.Add(5 * time.Second).Format(http.TimeFormat)}, 5 * time.Second},
		{"legacy reset HTTP-date passed", http.StatusOK, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", t0.Add(-8 * time.Second).Format(http.TimeFormat)}, off},
		// Retry-After as an HTTP-date: counted from the local clock (in
		// step with Date), not from the whole second.
		{"Retry-After HTTP-date", http.StatusTooManyRequests, []string{"Retry-After", t0.Add(9 * time.Second).Format(http.TimeFormat)}, 9 * time.Second},
		{"Retry-After seconds", http.StatusServiceUnavailable, []string{"Retry-After", "4"}, 4*time.Second + off},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newAutoClock()
			srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					w.Header().Set("Date", t0.Format(http.TimeFormat))
					for i := 0; i < len(tc.kv); i += 2 {
						w.Header().Set(tc.kv[i], tc.kv[i+1])
					}
					w.WriteHeader(tc.status)
					clock.Advance(off) // the response takes its time
					return
				}
				w.Write([]byte("ok"))
			})
			hc, _ := newClient(t, clock, client.WithRandom(zeroSource{}))
			status, _, err := get(hc, srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			if status == tc.status {
				// Not retried: the next call.
				if _, _, err := get(hc, srv.URL); err != nil {
					t.Fatal(err)
				}
			}
			if at, want := srv.arrivals(), []time.Duration{0, tc.want}; !slices.Equal(at, want) {
				t.Errorf("arrivals %v, want %v", at, want)
			}
		})
	}
}

// Missing or malformed values, in every field the client reads, never
// panic and never hold: the next request goes at once (a 200 carrying
// them), or after the backoff alone (a 429 carrying them). A value that
// is well formed but absurd (years, beyond int64) never makes a request
// wait beyond WithMaxRetryAfter: a refusal asking for it is given up at
// once, and a request meeting its hold waits at most that long.
func TestInteropMalformedForms(t *testing.T) {
	fields := []string{"Retry-After", "retry-after-ms", "x-ms-retry-after-ms", "X-Rate-Limit-Retry-After-Seconds", "RateLimit", "RateLimit-Policy",
		"RateLimit-Remaining", "RateLimit-Reset", "X-RateLimit-Remaining", "X-RateLimit-Reset", "X-RateLimit-Reset-After",
		"X-Rate-Limit-Remaining", "X-Rate-Limit-Reset", "x-ratelimit-remaining-requests", "x-ratelimit-reset-requests",
		"anthropic-ratelimit-requests-remaining", "anthropic-ratelimit-requests-reset", "Date", "Age"}
	malformed := []string{"", " ", "abc", "-5", "1e3", "NaN", "Inf", "+Inf", "12abc", "0x10", "１２", "1.5.5", ",", ",,0,,",
		`"a";r=0;t=`, `"a";r=0;t=-1`, `"a";r=;t=5`, `limit=, remaining=0, reset=`, "remaining=0, reset=five",
		"Mon, 32 Foo 2026 99:99:99 GMT"}
	absurd := []string{"99999999999999999999999", "9223372036854775807", "315360000", "999999999999999",
		`"a";r=0;t=999999999999999`, `limit=1, remaining=0, reset=999999999999999`, "Fri, 31 Dec 9999 23:59:59 GMT"}
	const maxRA = 30 * time.Second
	for _, field := range fields {
		for _, v := range append(malformed, absurd...) {
			for _, status := range []int{http.StatusOK, http.StatusTooManyRequests} {
				name := fmt.Sprintf("%s=%q/%d", field, v, status)
				clock := newAutoClock()
				srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
					if n == 1 {
						w.Header()[http.CanonicalHeaderKey(field)] = []string{v}
						// A remaining of 0 beside every reset, so that a
						// reset read wrongly would hold.
						for _, rem := range []string{"RateLimit-Remaining", "X-RateLimit-Remaining", "X-Rate-Limit-Remaining",
							"x-ratelimit-remaining-requests", "anthropic-ratelimit-requests-remaining"} {
							if http.CanonicalHeaderKey(rem) != http.CanonicalHeaderKey(field) {
								w.Header().Set(rem, "0")
							}
						}
						w.WriteHeader(status)
						return
					}
					w.Write([]byte("ok"))
				})
				hc, _ := newClient(t, clock, client.WithRandom(maxSource{}), client.WithBackoff(time.Second, time.Second),
					client.WithMaxRetryAfter(maxRA), client.WithMaxWait(time.Hour))
				for range 2 {
					if _, _, err := get(hc, srv.URL); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
				}
				if at := srv.arrivals(); status == http.StatusOK && slices.Contains(malformed, v) && at[1] != 0 {
					t.Errorf("%s: second request at %s, want at once (a malformed value holds nothing)", name, at[1])
				}
				for _, s := range clock.Sleeps() {
					if s > maxRA {
						t.Errorf("%s: slept %s, more than WithMaxRetryAfter %s", name, s, maxRA)
					}
				}
			}
		}
	}
}
