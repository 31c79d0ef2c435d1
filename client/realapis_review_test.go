package client_test

import (
	"io"
	"net/http"
	"slices"
	"testing"
	"time"
)

// Reddit's API writes X-Ratelimit-Remaining as a decimal ("599.0", and
// "0.0" once the quota is spent; its own client, prawcore, reads it with
// float()). A remaining count of zero written so is none left: the next
// request waits for X-Ratelimit-Reset (delta-seconds there), and a 429
// carrying it (Reddit sends no Retry-After) is retried after that reset,
// not after a backoff of a fraction of a second that only earns another
// 429. A count below one whole request is none left too; one of a whole
// request or more is not.
func TestDecimalRemainingCount(t *testing.T) {
	for _, tc := range []struct {
		remaining string
		want      time.Duration
	}{
		{"0.0", 5 * time.Second},
		{"0.00", 5 * time.Second},
		{"0.5", 5 * time.Second},
		{"1.0", 0},
		{"599.0", 0},
	} {
		t.Run(tc.remaining, func(t *testing.T) {
			checkHold(t, tc.want, "X-Ratelimit-Used", "600", "X-Ratelimit-Remaining", tc.remaining, "X-Ratelimit-Reset", "5")
		})
	}
	t.Run("429", func(t *testing.T) {
		clock := newAutoClock()
		srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
			if n == 1 {
				w.Header().Set("X-Ratelimit-Used", "600")
				w.Header().Set("X-Ratelimit-Remaining", "0.0")
				w.Header().Set("X-Ratelimit-Reset", "7")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			io.WriteString(w, "ok")
		})
		hc, _ := newClient(t, clock)
		if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
			t.Fatalf("got %d %v", status, err)
		}
		if at, want := srv.arrivals(), []time.Duration{0, 7 * time.Second}; !slices.Equal(at, want) {
			t.Errorf("arrivals %v, want %v: the retry waits for the reset", at, want)
		}
	})
}
