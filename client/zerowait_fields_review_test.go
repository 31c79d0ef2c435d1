package client_test

import (
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// A refusal whose Retry-After asks for no wait ("0", a date not after now,
// retry-after-ms: 0) has no usable Retry-After: WithBackoff's doc says the
// backoff applies, "or, with proactive pacing, until the reset the
// response's rate-limit fields announce when that comes later". An
// HTTP-date written to the second by a server whose wait is shorter than a
// second reads as a date not after now, while its RateLimit field says 1
// second; a "0" beside a RateLimit t is a server's slip the draft warns of.
// Either way the fields' reset counts: the retry waits for it, and the
// other requests of the key are held until it, as without a Retry-After.
func TestRetryAfterOfNoWaitKeepsTheFieldsReset(t *testing.T) {
	eachNoWaitRefusal(t, retriedAtReset)
}

// noWaits are the Retry-Afters that ask for no wait.
var noWaits = []struct {
	name   string
	header string
	value  func(now time.Time) string
}{
	{"zero seconds", "Retry-After", func(time.Time) string { return "0" }},
	{"date now", "Retry-After", func(now time.Time) string { return now.UTC().Format(http.TimeFormat) }},
	{"date past", "Retry-After", func(now time.Time) string { return now.Add(-time.Hour).UTC().Format(http.TimeFormat) }},
	{"zero millis", "Retry-After-Ms", func(time.Time) string { return "0" }},
}

// zeroFields are rate-limit fields saying no quota is left for 6 seconds.
var zeroFields = []struct {
	name string
	set  func(h http.Header)
}{
	{"ietf", func(h http.Header) { h.Set("RateLimit", `"default";r=0;t=6`) }},
	{"legacy", func(h http.Header) { h.Set("X-RateLimit-Remaining", "0"); h.Set("X-RateLimit-Reset", "6") }},
}

// eachNoWaitRefusal runs f in a subtest for each of noWaits beside each
// of zeroFields, with set setting them on a refusal.
func eachNoWaitRefusal(t *testing.T, f func(t *testing.T, set func(h http.Header, now time.Time))) {
	for _, tc := range noWaits {
		for _, fields := range zeroFields {
			t.Run(tc.name+"/"+fields.name, func(t *testing.T) {
				f(t, func(h http.Header, now time.Time) {
					h.Set(tc.header, tc.value(now))
					fields.set(h)
				})
			})
		}
	}
}

// The key is held too: a request sent after the refusal was returned
// (no retries) waits for the fields' reset.
func TestRetryAfterOfNoWaitHoldsTheKey(t *testing.T) {
	eachNoWaitRefusal(t, func(t *testing.T, set func(h http.Header, now time.Time)) {
		clock := newAutoClock()
		srv := newStub(t, clock, refuseOnce(clock, set))
		hc, _ := newClient(t, clock, client.WithRetries(0))
		for i, want := range []int{429, 200} {
			if status, _, err := get(hc, srv.URL); err != nil || status != want {
				t.Fatalf("request %d: got %d %v, want %d", i+1, status, err, want)
			}
		}
		if at, want := srv.arrivals(), []time.Duration{0, 6 * time.Second}; !slices.Equal(at, want) {
			t.Errorf("arrivals %v, want %v (the second request held until the fields' reset)", at, want)
		}
	})
}

// The same refusal whose fields announce a reset beyond WithMaxRetryAfter
// is given up on at once, as without a Retry-After ("rate-limit reset
// exceeds the maximum"), rather than retried after backoffs into refusals
// the server announced.
func TestRetryAfterOfNoWaitResetBeyondCap(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "0")
		w.Header().Set("RateLimit", `"daily";r=0;t=3600`)
		w.WriteHeader(http.StatusTooManyRequests)
	})
	hc, _ := newClient(t, clock, client.WithGiveUpError())
	_, _, err := get(hc, srv.URL)
	var re *client.RetryError
	if !errors.As(err, &re) || re.Attempts != 1 || re.Reason != "rate-limit reset exceeds the maximum" {
		t.Fatalf("got %v, want a *RetryError after 1 attempt, reason \"rate-limit reset exceeds the maximum\"", err)
	}
	if at := srv.arrivals(); len(at) != 1 {
		t.Errorf("arrivals %v, want the one attempt", at)
	}
}
