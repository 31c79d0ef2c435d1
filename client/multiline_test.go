package client_test

import (
	"io"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// A response may carry a field in several lines: two layers (a gateway and
// the application) may each write their own, or a proxy may repeat one.
// The Retry-After of a 429 sent in several lines is the longest wait any
// valid line asks for, whatever the order of the lines; an invalid line is
// skipped, as an invalid field is. Among its forms the most precise still
// comes first: a valid retry-after-ms line wins over every Retry-After line.
func TestRetryAfterSeveralLines(t *testing.T) {
	date := func(d time.Duration) string { return t0.Add(d).Format(http.TimeFormat) }
	for _, tc := range []struct {
		name string
		kv   []string
		want time.Duration
	}{
		{"longest second", []string{"Retry-After", "2", "Retry-After", "7"}, 7 * time.Second},
		{"longest first", []string{"Retry-After", "7", "Retry-After", "2"}, 7 * time.Second},
		{"invalid line skipped", []string{"Retry-After", "soon", "Retry-After", "4"}, 4 * time.Second},
		{"date and seconds", []string{"Retry-After", "3", "Retry-After", date(9 * time.Second)}, 9 * time.Second},
		{"date in the past and seconds", []string{"Retry-After", date(-time.Minute), "Retry-After", "3"}, 3 * time.Second},
		{"retry-after-ms lines", []string{"retry-after-ms", "100", "retry-after-ms", "900", "Retry-After", "5"}, 900 * time.Millisecond},
		{"retry-after-ms invalid line", []string{"retry-after-ms", "-1", "retry-after-ms", "250", "Retry-After", "5"}, 250 * time.Millisecond},
		{"x-ms-retry-after-ms lines", []string{"x-ms-retry-after-ms", "300", "x-ms-retry-after-ms", "1500"}, 1500 * time.Millisecond},
		// A millisecond field joined into one line by a proxy: its members.
		{"retry-after-ms members", []string{"retry-after-ms", "100, 900", "Retry-After", "5"}, 900 * time.Millisecond},
		{"retry-after-ms invalid member skipped", []string{"retry-after-ms", "-1, 250", "Retry-After", "5"}, 250 * time.Millisecond},
		{"x-ms-retry-after-ms members", []string{"x-ms-retry-after-ms", "1500,300", "Retry-After", "5"}, 1500 * time.Millisecond},
		// Retry-After lines joined into one by a proxy, with commas: each
		// member counts as a line of its own, an HTTP-date's own comma
		// (after its day name) kept in it.
		{"joined seconds", []string{"Retry-After", "2, 7"}, 7 * time.Second},
		{"joined seconds without space", []string{"Retry-After", "7,2"}, 7 * time.Second},
		{"joined dates", []string{"Retry-After", date(9*time.Second) + ", " + date(3*time.Second)}, 9 * time.Second},
		{"joined seconds and date", []string{"Retry-After", "3, " + date(9*time.Second)}, 9 * time.Second},
		{"joined date and seconds", []string{"Retry-After", date(3*time.Second) + ", 9"}, 9 * time.Second},
		{"joined RFC 850 date and seconds", []string{"Retry-After", t0.Add(8*time.Second).Format(time.RFC850) + ",2"}, 8 * time.Second},
		{"joined invalid member skipped", []string{"Retry-After", "soon, 4"}, 4 * time.Second},
		{"joined empty members skipped", []string{"Retry-After", ", 4,,"}, 4 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newAutoClock()
			srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					for i := 0; i+1 < len(tc.kv); i += 2 {
						w.Header().Add(tc.kv[i], tc.kv[i+1])
					}
					w.WriteHeader(http.StatusTooManyRequests)
					return
				}
				io.WriteString(w, "ok")
			})
			var retries []client.Retry
			hc, _ := newClient(t, clock, client.WithRandom(zeroSource{}),
				client.WithOnRetry(func(r client.Retry) { retries = append(retries, r) }))
			if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
				t.Fatalf("got %d %v", status, err)
			}
			if at, want := srv.arrivals(), []time.Duration{0, tc.want}; !slices.Equal(at, want) {
				t.Errorf("arrivals %v, want %v", at, want)
			}
			if len(retries) != 1 || !retries[0].RetryAfter || retries[0].Wait != tc.want {
				t.Errorf("retries %+v, want one after a Retry-After of %v", retries, tc.want)
			}
		})
	}
}

// The rate-limit fields in several lines, through the Transport: a List
// field (RateLimit, RateLimit-Policy) is one List across its lines, as RFC
// 9110 §5.3 and RFC 9651 §4.2 have it, and a Dictionary (draft-7) one
// Dictionary. A field of one value, a Structured Field Integer (draft-6's
// RateLimit-Remaining and RateLimit-Reset) or a plain one (the X-RateLimit,
// X-Rate-Limit, OpenAI and Anthropic fields), is read as the most cautious
// of its valid lines: no quota left when any says none, the latest reset,
// the smallest quota.
func TestRateLimitFieldsSeveralLines(t *testing.T) {
	unix := func(d time.Duration) string { return strconv.FormatInt(t0.Add(d).Unix(), 10) }
	rfc := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339) }
	for _, tc := range []struct {
		name string
		kv   []string
		want time.Duration
	}{
		// Structured Fields.
		{"RateLimit List", []string{"RateLimit", `"sec";r=3;t=1`, "RateLimit", `"day";r=0;t=9`}, 9 * time.Second},
		{"RateLimit-Policy List", []string{"RateLimit", `"min";r=0`,
			"RateLimit-Policy", `"sec";q=1;w=1`, "RateLimit-Policy", `"min";q=10;w=20`}, 20 * time.Second},
		{"draft-7 Dictionary", []string{"RateLimit", "limit=10, remaining=0", "RateLimit", "reset=4"}, 4 * time.Second},
		{"draft-7 Dictionary, last member wins", []string{"RateLimit", "remaining=0, reset=4", "RateLimit", "remaining=3"}, 0},
		{"draft-6 Item in two lines", []string{"RateLimit-Remaining", "0", "RateLimit-Remaining", "0", "RateLimit-Reset", "3"}, 3 * time.Second},
		// Plain values.
		{"X-RateLimit-Remaining none in the second line", []string{"X-RateLimit-Remaining", "5", "X-RateLimit-Remaining", "0",
			"X-RateLimit-Reset", "3"}, 3 * time.Second},
		{"X-RateLimit-Remaining invalid line skipped", []string{"X-RateLimit-Remaining", "-1", "X-RateLimit-Remaining", "0",
			"X-RateLimit-Reset", "3"}, 3 * time.Second},
		{"X-RateLimit-Remaining left in every line", []string{"X-RateLimit-Remaining", "5", "X-RateLimit-Remaining", "1",
			"X-RateLimit-Reset", "3"}, 0},
		{"X-RateLimit-Reset latest", []string{"X-RateLimit-Remaining", "0",
			"X-RateLimit-Reset", "2", "X-RateLimit-Reset", unix(8 * time.Second)}, 8 * time.Second},
		{"X-RateLimit-Reset invalid line skipped", []string{"X-RateLimit-Remaining", "0",
			"X-RateLimit-Reset", "soon", "X-RateLimit-Reset", "2"}, 2 * time.Second},
		{"X-Rate-Limit", []string{"x-rate-limit-remaining", "900", "x-rate-limit-remaining", "0",
			"x-rate-limit-reset", unix(4 * time.Second), "x-rate-limit-reset", unix(6 * time.Second)}, 6 * time.Second},
		{"OpenAI", []string{"x-ratelimit-remaining-requests", "59", "x-ratelimit-remaining-requests", "0",
			"x-ratelimit-reset-requests", "1s", "x-ratelimit-reset-requests", "3s"}, 3 * time.Second},
		{"OpenAI smallest quota", []string{"x-ratelimit-limit-requests", "60", "x-ratelimit-limit-requests", "2",
			"x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "1m0s"}, 30 * time.Second},
		{"OpenAI invalid quota line skipped", []string{"x-ratelimit-limit-requests", "0", "x-ratelimit-limit-requests", "60",
			"x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "1m0s"}, time.Second},
		{"Anthropic", []string{"anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-remaining", "7",
			"anthropic-ratelimit-requests-reset", rfc(5 * time.Second), "anthropic-ratelimit-requests-reset", rfc(12 * time.Second)}, 12 * time.Second},
		{"Anthropic smallest quota", []string{"anthropic-ratelimit-requests-limit", "50", "anthropic-ratelimit-requests-limit", "4",
			"anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", rfc(20 * time.Second)}, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) { checkHold(t, tc.want, tc.kv...) })
	}
}

// A 403 is a refusal for rate when any line of its rate-limit fields says
// so: it is retried after the reset, not returned as the server's answer.
func TestRateLimited403SeveralLines(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			w.Header().Add("X-RateLimit-Remaining", "4999")
			w.Header().Add("X-RateLimit-Remaining", "0")
			w.Header().Add("X-RateLimit-Reset", strconv.FormatInt(t0.Add(5*time.Second).Unix(), 10))
			w.WriteHeader(http.StatusForbidden)
			return
		}
		io.WriteString(w, "ok")
	})
	hc, _ := newClient(t, clock, client.WithRandom(zeroSource{}))
	if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
		t.Fatalf("got %d %v, want 200 after a retry", status, err)
	}
	if at, want := srv.arrivals(), []time.Duration{0, 5 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}

// An empty field line, or an empty member within a line, is no member at
// all: RFC 9110 §5.6.1 asks a recipient of a list to ignore empty
// elements, so it does not make the joined List (or Dictionary) of the
// valid lines malformed, whichever line it stands in. (Joined, an empty
// line left a leading or doubled comma, which RFC 9651 rejects: the whole
// field was ignored, and the server's hint with it.)
func TestEmptyFieldLinesIgnored(t *testing.T) {
	for _, tc := range []struct {
		name string
		kv   []string
		want time.Duration
	}{
		{"RateLimit empty line first", []string{"RateLimit", "", "RateLimit", `"default";r=0;t=30`}, 30 * time.Second},
		{"RateLimit empty line last", []string{"RateLimit", `"default";r=0;t=30`, "RateLimit", ""}, 30 * time.Second},
		{"RateLimit blank line between", []string{"RateLimit", `"sec";r=3;t=1`, "RateLimit", " ", "RateLimit", `"day";r=0;t=9`}, 9 * time.Second},
		{"RateLimit empty members", []string{"RateLimit", `, "a";r=0;t=4,, "b";r=1;t=1 ,`}, 4 * time.Second},
		{"RateLimit only empty lines", []string{"RateLimit", "", "RateLimit", ""}, 0},
		{"RateLimit-Policy empty line", []string{"RateLimit", `"min";r=0`,
			"RateLimit-Policy", "", "RateLimit-Policy", `"min";q=10;w=20`}, 20 * time.Second},
		{"RateLimit-Policy empty members", []string{"RateLimit", `"min";r=0`,
			"RateLimit-Policy", `"sec";q=1;w=1,,"min";q=10;w=20,`}, 20 * time.Second},
		{"draft-7 Dictionary empty line", []string{"RateLimit", "", "RateLimit", "limit=10, remaining=0, reset=4"}, 4 * time.Second},
		{"draft-7 Dictionary empty members", []string{"RateLimit", "limit=10,, remaining=0, reset=4,"}, 4 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) { checkHold(t, tc.want, tc.kv...) })
	}
}

// A response's Age counts by its first member (RFC 9111 §5.1), and an empty
// line is no member (RFC 9110 §5.6.1): behind an empty Age line, the Age
// of 30 still marks the response as one from a cache, whose rate-limit
// fields are stale and ignored. (The empty first line read as no Age: the
// stale hint held the next request.)
func TestAgeEmptyLineIgnored(t *testing.T) {
	checkHold(t, 0, "Age", "", "Age", "30", "RateLimit", `"a";r=0;t=5`)
	checkHold(t, 5*time.Second, "Age", "", "Age", "0", "RateLimit", `"a";r=0;t=5`)
}

// A response with several Date lines that disagree leaves the server's
// clock in doubt. An absolute time (an HTTP-date Retry-After, a Unix-time
// or RFC 3339 reset) is then counted from whichever line makes the wait
// longest, each valid line read as if it were alone (see
// TestAbsoluteTimesFollowTheServersDate), whatever their order: waiting a
// little long costs less than a retry that earns another refusal. An
// invalid line is skipped. (The first line won: an in-step first line
// before one ten minutes old made a reset 30 s after the old one already
// past, and the client retried at once.)
func TestConflictingDateLines(t *testing.T) {
	httpDate := func(d time.Duration) string { return t0.Add(d).Format(http.TimeFormat) }
	old, ahead := -10*time.Minute, 20*time.Second
	for _, tc := range []struct {
		name  string
		dates []string
		ra    time.Duration // the Retry-After date, from t0
		want  time.Duration
	}{
		{"in step, then ten minutes old", []string{httpDate(0), httpDate(old)}, old + 30*time.Second, 30 * time.Second},
		{"ten minutes old, then in step", []string{httpDate(old), httpDate(0)}, old + 30*time.Second, 30 * time.Second},
		{"in step, then ahead", []string{httpDate(0), httpDate(ahead)}, ahead + 30*time.Second, ahead + 30*time.Second},
		{"ahead, then in step", []string{httpDate(ahead), httpDate(0)}, ahead + 30*time.Second, ahead + 30*time.Second},
		{"invalid, then ten minutes old", []string{"yesterday", httpDate(old)}, old + 30*time.Second, 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newAutoClock()
			srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					w.Header()["Date"] = tc.dates
					w.Header().Set("Retry-After", httpDate(tc.ra))
					w.WriteHeader(http.StatusTooManyRequests)
					return
				}
				io.WriteString(w, "ok")
			})
			hc, _ := newClient(t, clock, client.WithRandom(zeroSource{}))
			if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
				t.Fatalf("got %d %v", status, err)
			}
			if at, want := srv.arrivals(), []time.Duration{0, tc.want}; !slices.Equal(at, want) {
				t.Errorf("arrivals %v, want %v", at, want)
			}
		})
	}
	// The rate-limit fields' absolute resets too. The stub's own Date, in
	// step, comes first.
	unix := func(d time.Duration) string { return strconv.FormatInt(t0.Add(d).Unix(), 10) }
	rfc := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339) }
	for _, tc := range []struct {
		name string
		kv   []string
	}{
		{"X-RateLimit-Reset", []string{"Date", httpDate(old), "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", unix(old + 30*time.Second)}},
		{"X-Rate-Limit-Reset", []string{"Date", httpDate(old), "x-rate-limit-remaining", "0", "x-rate-limit-reset", unix(old + 30*time.Second)}},
		{"anthropic-ratelimit-requests-reset", []string{"Date", httpDate(old), "anthropic-ratelimit-requests-remaining", "0",
			"anthropic-ratelimit-requests-reset", rfc(old + 30*time.Second)}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkHold(t, 30*time.Second, tc.kv...) })
	}
}

// draft-6's RateLimit-Remaining and RateLimit-Reset are each one Integer,
// but a response may carry them in several lines, or in one line of
// several members where a proxy joined the lines: they are read as the
// other fields of one value are, each member on its own, skipping the
// invalid ones (not Integers, negative, with parameters): no quota is left
// when any member says 0, and the hold is the latest reset. (RFC 9651
// makes such a field a List, not an Item, and it was ignored: a repeated
// RateLimit-Remaining: 0 held nothing.)
func TestDraft6SeveralLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		kv   []string
		want time.Duration
	}{
		{"Remaining 0 twice", []string{"RateLimit-Remaining", "0", "RateLimit-Remaining", "0", "RateLimit-Reset", "3"}, 3 * time.Second},
		{"Remaining 0, 0 in one line", []string{"RateLimit-Remaining", "0, 0", "RateLimit-Reset", "3"}, 3 * time.Second},
		{"Remaining 0 in the second line", []string{"RateLimit-Remaining", "5", "RateLimit-Remaining", "0", "RateLimit-Reset", "3"}, 3 * time.Second},
		{"Remaining 0 second in a line", []string{"RateLimit-Remaining", "5, 0", "RateLimit-Reset", "3"}, 3 * time.Second},
		{"Remaining left in every line", []string{"RateLimit-Remaining", "5", "RateLimit-Remaining", "1", "RateLimit-Reset", "3"}, 0},
		{"Remaining invalid line skipped", []string{"RateLimit-Remaining", "none", "RateLimit-Remaining", "0", "RateLimit-Reset", "3"}, 3 * time.Second},
		{"Remaining empty line skipped", []string{"RateLimit-Remaining", "", "RateLimit-Remaining", "0", "RateLimit-Reset", "3"}, 3 * time.Second},
		{"Reset latest of two lines", []string{"RateLimit-Remaining", "0", "RateLimit-Reset", "7", "RateLimit-Reset", "3"}, 7 * time.Second},
		{"Reset latest in one line", []string{"RateLimit-Remaining", "0", "RateLimit-Reset", "3, 7"}, 7 * time.Second},
		{"Reset invalid members skipped", []string{"RateLimit-Remaining", "0", "RateLimit-Reset", "soon, -9, 9;w=1, 4"}, 4 * time.Second},
		{"Reset only invalid", []string{"RateLimit-Remaining", "0, 0", "RateLimit-Reset", "soon", "RateLimit-Reset", "-3"}, 0},
		// A Structured Field has no thousands separators: "1,000" is the
		// List 1, 000, and 000 is an Integer 0.
		{"Remaining 1,000 is two members", []string{"RateLimit-Remaining", "1,000", "RateLimit-Reset", "3"}, 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) { checkHold(t, tc.want, tc.kv...) })
	}
}

// A plain rate-limit field of one value (the X-RateLimit, X-Rate-Limit,
// OpenAI and Anthropic fields; retry-after-ms, see
// TestRetryAfterSeveralLines) may reach the client as one line of several
// comma-separated values, where a proxy joined its lines (RFC 9110 §5.3):
// each member is read as a line of its own would be, skipping the empty and
// invalid ones, so no quota is left when any member says none, the reset is
// the latest, the quota the smallest. (The joined line was one malformed
// value: "5, 0" held nothing.) A value that may itself hold a comma is not
// cut there: Retry-After's HTTP-date (see TestRetryAfterSeveralLines), and
// an Anthropic reset whose fraction of a second follows a comma, as Go's RFC
// 3339 parser accepts.
func TestPlainFieldsSeveralMembers(t *testing.T) {
	unix := func(d time.Duration) string { return strconv.FormatInt(t0.Add(d).Unix(), 10) }
	rfc := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339) }
	for _, tc := range []struct {
		name string
		kv   []string
		want time.Duration
	}{
		{"X-RateLimit-Remaining none second", []string{"X-RateLimit-Remaining", "5, 0", "X-RateLimit-Reset", "3"}, 3 * time.Second},
		{"X-RateLimit-Remaining none first", []string{"X-RateLimit-Remaining", "0,5", "X-RateLimit-Reset", "3"}, 3 * time.Second},
		{"X-RateLimit-Remaining empty and invalid members", []string{"X-RateLimit-Remaining", ", -1,,0 ,", "X-RateLimit-Reset", "3"}, 3 * time.Second},
		{"X-RateLimit-Remaining left in every member", []string{"X-RateLimit-Remaining", "5, 1", "X-RateLimit-Reset", "3"}, 0},
		{"X-RateLimit-Reset latest", []string{"X-RateLimit-Remaining", "0",
			"X-RateLimit-Reset", "2, " + unix(8*time.Second)}, 8 * time.Second},
		{"X-RateLimit-Reset invalid member skipped", []string{"X-RateLimit-Remaining", "0",
			"X-RateLimit-Reset", "soon, 2"}, 2 * time.Second},
		{"X-Rate-Limit", []string{"x-rate-limit-remaining", "900, 0",
			"x-rate-limit-reset", unix(6*time.Second) + ", " + unix(4*time.Second)}, 6 * time.Second},
		{"OpenAI", []string{"x-ratelimit-remaining-requests", "59, 0",
			"x-ratelimit-reset-requests", "3s, 1s"}, 3 * time.Second},
		{"OpenAI smallest quota", []string{"x-ratelimit-limit-requests", "60, 2",
			"x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "1m0s"}, 30 * time.Second},
		{"Anthropic", []string{"anthropic-ratelimit-requests-remaining", "7, 0",
			"anthropic-ratelimit-requests-reset", rfc(5*time.Second) + ", " + rfc(12*time.Second)}, 12 * time.Second},
		{"Anthropic smallest quota", []string{"anthropic-ratelimit-requests-limit", "50, 4",
			"anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", rfc(20 * time.Second)}, 5 * time.Second},
		{"Anthropic reset with a decimal comma", []string{"anthropic-ratelimit-requests-remaining", "0",
			"anthropic-ratelimit-requests-reset", "2026-03-01T12:00:12,5Z"}, 12500 * time.Millisecond},
		// A count written with thousands separators is one number, not
		// members "1" and "000" (no quota left): no hold.
		{"X-RateLimit-Remaining thousands", []string{"X-RateLimit-Remaining", "1,000", "X-RateLimit-Reset", "3"}, 0},
		{"X-RateLimit-Remaining millions", []string{"X-RateLimit-Remaining", "12,000,000", "X-RateLimit-Reset", "3"}, 0},
		{"OpenAI thousands", []string{"x-ratelimit-remaining-requests", "9,000", "x-ratelimit-reset-requests", "3s"}, 0},
		// Joined with a space after the comma, they are members again.
		{"X-RateLimit-Remaining joined 1, 000", []string{"X-RateLimit-Remaining", "1, 000", "X-RateLimit-Reset", "3"}, 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) { checkHold(t, tc.want, tc.kv...) })
	}
}
