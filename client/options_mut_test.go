package client_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// Without options a refused request is sent four times in all (three
// retries), and the backoff before retry k, without a Retry-After, is at
// most min(30s, 250ms·2^(k−1)): the documented defaults, in numbers, since
// the tests elsewhere name the constants. With the largest draws the waits
// are those ceilings: 250ms, 500ms, 1s, … 16s, then 30s. Kills the
// survivors of the options.go survey that changed DefaultRetries (4),
// DefaultBackoffBase (249ms, 251ms, 250ns) and DefaultBackoffMax (29s, 31s,
// 30ns), or left base or ceiling out of defaults().
func TestDefaultsInNumbers(t *testing.T) {
	t.Run("retries", func(t *testing.T) {
		clock := newAutoClock()
		srv := newStub(t, clock, func(_ int, w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
		})
		hc, _ := newClient(t, clock)
		if status, _, err := get(hc, srv.URL); err != nil || status != http.StatusServiceUnavailable {
			t.Fatalf("got %d %v, want the last 503", status, err)
		}
		if n := len(srv.arrivals()); n != 4 {
			t.Errorf("sent %d times, want 4 (three retries)", n)
		}
	})
	t.Run("backoff", func(t *testing.T) {
		clock := newAutoClock()
		srv := newStub(t, clock, refuse(8, http.StatusServiceUnavailable, nil))
		var waits []time.Duration
		hc, _ := newClient(t, clock, client.WithRetries(8), client.WithRandom(maxSource{}),
			client.WithOnRetry(func(r client.Retry) { waits = append(waits, r.Wait) }))
		if status, _, err := get(hc, srv.URL); err != nil || status != http.StatusOK {
			t.Fatalf("got %d %v, want 200", status, err)
		}
		want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second,
			4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second}
		if !slices.Equal(waits, want) {
			t.Errorf("waited %v, want %v", waits, want)
		}
	})
}
