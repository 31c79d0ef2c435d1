package client_test

import (
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestRateLimited403: some APIs refuse an over-limit request with 403
// rather than 429 (GitHub: its secondary limits with Retry-After, its
// primary limit with X-RateLimit-Remaining 0 and the reset). Such a 403 is
// a rate-limit refusal and is retried as a 429 is; a 403 without those
// signals (a plain Forbidden, or quota left) is returned at once, as
// before. Before, every 403 came back at once: the caller saw the refusal
// the server had told it how to avoid.
func TestRateLimited403(t *testing.T) {
	for _, tt := range []struct {
		name     string
		header   func(now time.Time) map[string]string
		attempts int
		status   int
	}{
		{name: "secondary limit, Retry-After", attempts: 2, status: 200,
			header: func(time.Time) map[string]string { return map[string]string{"Retry-After": "2"} }},
		{name: "primary limit, none remaining", attempts: 2, status: 200,
			header: func(now time.Time) map[string]string {
				return map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": strconv.FormatInt(now.Add(5*time.Second).Unix(), 10)}
			}},
		{name: "quota left", attempts: 1, status: 403,
			header: func(now time.Time) map[string]string {
				return map[string]string{"X-RateLimit-Remaining": "7", "X-RateLimit-Reset": strconv.FormatInt(now.Add(5*time.Second).Unix(), 10)}
			}},
		{name: "plain forbidden", attempts: 1, status: 403,
			header: func(time.Time) map[string]string { return nil }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock := newAutoClock()
			srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					for k, v := range tt.header(clock.Now()) {
						w.Header().Set(k, v)
					}
					w.WriteHeader(http.StatusForbidden)
					io.WriteString(w, "forbidden")
					return
				}
				io.WriteString(w, "ok")
			})
			hc, _ := newClient(t, clock)
			status, _, err := get(hc, srv.URL)
			if err != nil || status != tt.status {
				t.Errorf("got %d %v, want %d", status, err, tt.status)
			}
			if at := srv.arrivals(); len(at) != tt.attempts {
				t.Errorf("%d attempts (%v), want %d", len(at), at, tt.attempts)
			} else if tt.name == "secondary limit, Retry-After" && at[1] != 2*time.Second {
				t.Errorf("retried at %v, want after the Retry-After of 2s", at[1])
			}
		})
	}
}
