package client_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// A server cannot park the Transport beyond its caps: a Retry-After or a
// RateLimit reset of years (or beyond int64 nanoseconds) gives up at once,
// and holds the requests that follow no longer than WithMaxRetryAfter,
// which fail at once when that is more than their maximum wait.
func TestHostileHugeHints(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		field  string
		value  string
	}{
		{"Retry-After 2^63 s", http.StatusTooManyRequests, "Retry-After", "9223372036854775808"},
		{"Retry-After years", http.StatusServiceUnavailable, "Retry-After", "315360000"},
		{"Retry-After year 9999", http.StatusTooManyRequests, "Retry-After", "Fri, 31 Dec 9999 23:59:59 GMT"},
		{"RateLimit huge t", http.StatusOK, "RateLimit", `"a";r=0;t=999999999999999`},
		{"draft-7 huge reset", http.StatusOK, "RateLimit", `limit=1, remaining=0, reset=999999999999999`},
		{"legacy Unix far future", http.StatusOK, "X-RateLimit-Reset", "999999999999"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newAutoClock()
			srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				w.Header().Set(tc.field, tc.value)
				w.Header().Set("X-RateLimit-Remaining", "0")
				w.WriteHeader(tc.status)
			})
			hc, _ := newClient(t, clock, client.WithMaxRetryAfter(time.Hour), client.WithMaxWait(30*time.Second), client.WithGiveUpError())
			_, _, err := get(hc, srv.URL)
			var re *client.RetryError
			if tc.status != http.StatusOK && (!errors.As(err, &re) || re.Attempts != 1) {
				t.Fatalf("first request: %v, want a RetryError after 1 attempt", err)
			}
			// The hold is cut to an hour, more than the maximum wait:
			// the next request fails at once, without sleeping.
			_, _, err = get(hc, srv.URL)
			var we *client.WaitError
			if !errors.As(err, &we) || !we.Held || we.Wait != time.Hour {
				t.Fatalf("second request: %v, want a WaitError for a 1h hold", err)
			}
			if s := clock.Sleeps(); len(s) != 0 {
				t.Errorf("slept %v", s)
			}
			if got := len(srv.arrivals()); got != 1 {
				t.Errorf("%d requests reached the server, want 1", got)
			}
		})
	}
}
