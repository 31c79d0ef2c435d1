package client_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// afterSleepClock is an auto clock (one goroutine) that runs then, once,
// right after the first Sleep has moved the clock on: news that came while
// the caller slept.
type afterSleepClock struct {
	*fakeClock
	once sync.Once
	then func()
}

func (c *afterSleepClock) Sleep(ctx context.Context, d time.Duration) error {
	err := c.fakeClock.Sleep(ctx, d)
	c.once.Do(c.then)
	return err
}

// A hold extended while a request sleeps on it is waited for too, and the
// holds waited for count together against the maximum wait. api.example is
// held until 2s; a request arrives at 0 and sleeps 2s on the hold; a
// response read at 1s (seen once the request wakes) holds the key on until
// 4s. The request has waited 2s and would wait 2s more: with a maximum wait
// of 4s it sleeps again and is sent at 4s, with or without pacing; with a
// maximum wait of 3s it fails, at 2s, with a held *WaitError of 4s. Without
// the 2s slept counted (pace.go's held += d as -=) it slept on and was sent
// at 4s with a maximum of 3s; without the look after the sleep (pace.go's
// continue after it deleted) it was sent at 2s, within the hold, without
// pacing, and with pacing counted the 2s twice and failed with 6s.
func TestHoldExtendedWhileAsleep(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    []client.Option
		maxWait time.Duration
		fail    bool
	}{
		{"unpaced, within the maximum", nil, 4 * time.Second, false},
		{"paced, within the maximum", []client.Option{client.WithRate(5, time.Second)}, 4 * time.Second, false},
		{"unpaced, beyond the maximum", nil, 3 * time.Second, true},
		{"paced, beyond the maximum", []client.Option{client.WithRate(5, time.Second)}, 3 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &afterSleepClock{fakeClock: newAutoClock()}
			var sent []time.Duration
			server := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				sent = append(sent, clock.Now().Sub(t0))
				return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
			})
			opts := append([]client.Option{client.WithClock(clock), client.WithMaxWait(tc.maxWait)}, tc.opts...)
			tr, err := client.New(server, opts...)
			if err != nil {
				t.Fatal(err)
			}
			tr.Observe("api.example", http.Header{"Ratelimit": {`"p";r=0;t=2`}}, t0)
			clock.then = func() {
				tr.Observe("api.example", http.Header{"Ratelimit": {`"p";r=0;t=3`}}, t0.Add(time.Second))
			}
			err = roundTrip(context.Background(), tr, "http://api.example/", "")
			if tc.fail {
				var we *client.WaitError
				if !errors.As(err, &we) {
					t.Fatalf("error %v, want a *WaitError (2s waited, 2s more to wait, beyond the maximum of 3s)", err)
				}
				if we.Wait != 4*time.Second || we.MaxWait != 3*time.Second || !we.Held || we.Deadline {
					t.Errorf("%+v, want Wait 4s, MaxWait 3s, Held, no Deadline", *we)
				}
				if len(sent) != 0 {
					t.Errorf("sent at %v, want never", sent)
				}
				if got, want := clock.Sleeps(), []time.Duration{2 * time.Second}; !slices.Equal(got, want) {
					t.Errorf("slept %v, want %v", got, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v, want none (4s waited in all, the maximum)", err)
			}
			if want := []time.Duration{4 * time.Second}; !slices.Equal(sent, want) {
				t.Errorf("sent at %v, want %v: when the extended hold ends", sent, want)
			}
			if got, want := clock.Sleeps(), []time.Duration{2 * time.Second, 2 * time.Second}; !slices.Equal(got, want) {
				t.Errorf("slept %v, want %v", got, want)
			}
		})
	}
}
