package client_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/client"
)

// WithMaxWait bounds a request's wait for its turn in the queue, all its
// turns together: one whose turn passed while it waited for a probe's
// answer takes a new turn, and waits for it within what is left of the
// maximum, not a whole maximum again. Here (1 request a second, a maximum
// wait of 10s, two Transports sharing a store) X's turn is 9s away, at 11s;
// it then waits for the answer of the probe of a cut hold, which comes at
// 12s, while the other Transport has taken the turns up to 20s. X's new
// turn, 21s, would make 18s of waiting for turns: X must fail with a
// *WaitError at 12s, not be sent at 21s, 19s after it arrived.
// (In a synctest bubble: the seconds are virtual. Found by a chaos run in
// virtual time, in which requests waited up to 2.5 times their maximum wait
// before they were sent.)
func TestNewTurnWithinTheMaximumWaitLeft(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var mu sync.Mutex
		sent := map[string]time.Duration{}
		next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			who := r.Header.Get("X-Caller")
			mu.Lock()
			sent[who] = time.Since(start)
			mu.Unlock()
			h := http.Header{}
			status := http.StatusOK
			switch who {
			case "first":
				// Refused for the hour: the hold is cut to 2s.
				status = http.StatusTooManyRequests
				h.Set("Retry-After", "3600")
			case "probe":
				time.Sleep(10 * time.Second) // answered at 12s
			}
			return &http.Response{StatusCode: status, Header: h, Body: http.NoBody, Request: r}, nil
		})
		store, err := algorithms.NewMemoryStore()
		if err != nil {
			t.Fatal(err)
		}
		opts := []client.Option{client.WithRate(1, time.Second), client.WithMaxWait(10 * time.Second),
			client.WithMaxRetryAfter(2 * time.Second), client.WithStore(store)}
		a, err := client.New(next, opts...)
		if err != nil {
			t.Fatal(err)
		}
		b, err := client.New(next, opts...)
		if err != nil {
			t.Fatal(err)
		}
		const url = "http://api.example/"
		if err := roundTrip(context.Background(), a, url, "first"); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		others := func(from, to int) {
			for i := from; i < to; i++ {
				wg.Go(func() {
					if err := roundTrip(context.Background(), b, url, "b"+strconv.Itoa(i)); err != nil {
						t.Errorf("b%d: %v", i, err)
					}
				})
			}
		}
		time.Sleep(2 * time.Second) // the cut hold has passed
		wg.Go(func() { _ = roundTrip(context.Background(), a, url, "probe") })
		synctest.Wait() // the probe is out, at 2s
		others(1, 9)    // b's turns at 3s to 10s
		synctest.Wait()
		var xErr error
		var xDone time.Duration
		wg.Go(func() {
			xErr = roundTrip(context.Background(), a, url, "X") // its turn at 11s
			xDone = time.Since(start)
		})
		time.Sleep(9*time.Second + 500*time.Millisecond)
		others(9, 18) // at 11.5s, b's turns at 12s to 20s
		wg.Wait()
		var we *client.WaitError
		if !errors.As(xErr, &we) || we.Held || xDone != 12*time.Second {
			mu.Lock()
			at, ok := sent["X"]
			mu.Unlock()
			t.Fatalf("X: RoundTrip = %v at %v (sent: %v at %v), want a *WaitError for its turn at 12s", xErr, xDone, ok, at)
		}
		if we.Wait != 18*time.Second {
			t.Errorf("X: WaitError.Wait = %v, want 18s (9s for its first turn, 9s for its new one)", we.Wait)
		}
	})
}
