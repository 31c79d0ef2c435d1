package client_test

import (
	"context"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// WithProactive(false) turns off what the rate-limit fields and a
// refusal's Retry-After do to the other requests of a key (holds), and
// what the fields do to the timing of a retry (its backoff's floor, the
// give-up for a reset beyond WithMaxRetryAfter); it does not turn off
// retrying, which is WithRetries's: a refused request is still retried
// after its own Retry-After, or else after the backoff, as a plain
// retrying transport does.
func TestProactiveOffStillRetries(t *testing.T) {
	t.Run("Retry-After: the retry waits, the others are not held", func(t *testing.T) {
		clock := newFakeClock()
		srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Caller") == "0" && n == 1 {
				w.Header().Set("Retry-After", "5")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			io.WriteString(w, "ok")
		})
		_, tr := newClient(t, clock, client.WithProactive(false))
		// Caller 0 is refused at 0s and retried after its 5s; caller 1,
		// at 1s, is not held for them.
		clock.drive(t, 2, func(i int) {
			caller := "0"
			if i == 1 {
				caller = "1"
				clock.Sleep(context.Background(), time.Second)
			}
			if err := roundTrip(context.Background(), tr, srv.URL, caller); err != nil {
				t.Errorf("caller %d: %v", i, err)
			}
		})
		if at, want := srv.arrivals(), []time.Duration{0, time.Second, 5 * time.Second}; !slices.Equal(at, want) {
			t.Errorf("arrivals %v, want %v", at, want)
		}
	})
	t.Run("fields alone: backoff retries, no give-up for the reset", func(t *testing.T) {
		for _, proactive := range []bool{false, true} {
			clock := newAutoClock()
			srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				w.Header().Set("RateLimit", `"day";r=0;t=36000`)
				w.WriteHeader(http.StatusTooManyRequests)
				io.WriteString(w, "slow down")
			})
			hc, _ := newClient(t, clock, client.WithProactive(proactive),
				client.WithRandom(maxSource{}), client.WithBackoff(time.Second, time.Second))
			if status, _, err := get(hc, srv.URL); err != nil || status != http.StatusTooManyRequests {
				t.Errorf("proactive %v: got %d %v, want the last 429", proactive, status, err)
			}
			// Off: the retries go after the 1s backoff, the reset 10 hours
			// away bounding nothing. On: the reset, beyond the maximum, is
			// a give-up at once (see TestRetryResetBeyondCap).
			want := []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second}
			if proactive {
				want = want[:1]
			}
			if at := srv.arrivals(); !slices.Equal(at, want) {
				t.Errorf("proactive %v: arrivals %v, want %v", proactive, at, want)
			}
		}
	})
	t.Run("WithRetries(0) is what stops retrying", func(t *testing.T) {
		clock := newAutoClock()
		srv := newStub(t, clock, refuse(1, http.StatusTooManyRequests, func() string { return "1" }))
		hc, _ := newClient(t, clock, client.WithProactive(false), client.WithRetries(0))
		if status, _, err := get(hc, srv.URL); err != nil || status != http.StatusTooManyRequests {
			t.Errorf("got %d %v, want the 429", status, err)
		}
		if at := srv.arrivals(); len(at) != 1 {
			t.Errorf("arrivals %v, want one", at)
		}
	})
}
