package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// sleepTeller is a fakeClock that tells on sleeps, each as it begins.
type sleepTeller struct {
	*fakeClock
	sleeping chan time.Duration
}

func (c sleepTeller) Sleep(ctx context.Context, d time.Duration) error {
	c.sleeping <- d
	return c.fakeClock.Sleep(ctx, d)
}

// WithMaxWait bounds the waits for the server's holds "all of them
// together", a retry's included ("A retry waits for the server's
// Retry-After under the same bound"). A request refused with a wait of 50s
// (a Retry-After, or RateLimit fields announcing the reset) waits for it
// before its retry; 45s in, the response to another request of the key
// (in flight all along) asks for 60s more, a hold until 1m45s. The retry
// would wait 1m45s for the server's holds, more than its minute: at 50s it
// gives up unsent, the refusal coming back (or a *RetryError, "retry would
// wait too long", wrapping a held *WaitError of 1m45s). It did so when
// paced (its retry waited for the hold at the gate, in wait, which counts
// every hold), but unpaced it slept the first hold in RoundTrip, then the
// second in wait counting from 0: the retry went at 1m45s.
func TestRetryHoldsBoundedTogether(t *testing.T) {
	for _, form := range []string{"Retry-After", "RateLimit"} {
		for _, paced := range []bool{false, true} {
			for _, giveUpError := range []bool{false, true} {
				name := form
				if paced {
					name += "/paced"
				}
				if giveUpError {
					name += "/WithGiveUpError"
				}
				t.Run(name, func(t *testing.T) {
					fc := newFakeClock()
					clock := sleepTeller{fc, make(chan time.Duration, 10)}
					srv := newStub(t, fc, func(n int, w http.ResponseWriter, r *http.Request) {
						if n > 1 {
							io.WriteString(w, "ok")
							return
						}
						if form == "Retry-After" {
							w.Header().Set("Retry-After", "50")
						} else {
							w.Header().Set("RateLimit", `"default";r=0;t=50`)
						}
						w.WriteHeader(http.StatusTooManyRequests)
						io.WriteString(w, "slow down")
					})
					opts := []client.Option{client.WithMaxWait(time.Minute), client.WithBackoff(time.Millisecond, time.Millisecond)}
					if paced {
						opts = append(opts, client.WithRate(100, time.Second))
					}
					if giveUpError {
						opts = append(opts, client.WithGiveUpError())
					}
					_, tr := newClient(t, clock, opts...)
					type outcome struct {
						status int
						body   string
						err    error
					}
					done := make(chan outcome, 1)
					go func() {
						req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
						resp, err := tr.RoundTrip(req)
						if err != nil {
							done <- outcome{err: err}
							return
						}
						b, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						done <- outcome{status: resp.StatusCode, body: string(b)}
					}()
					if d := hangguard.Await(t, clock.sleeping, 5*time.Second, "the refused request waiting for its retry"); d != 50*time.Second {
						t.Fatalf("the retry waits %v, want the 50s asked for", d)
					}
					// The teller tells before the sleep is set on the
					// clock: time must not move before it is.
					fc.waitSleepers(t, 1, "the refused request waiting for its retry")
					fc.Advance(45 * time.Second)
					tr.Observe(srv.Listener.Addr().String(), http.Header{"Retry-After": {"60"}}, fc.Now())
					fc.Advance(5 * time.Second)
					var got outcome
					g := hangguard.New(waitBound)
					defer g.Stop()
				wait:
					for {
						select {
						case got = <-done:
							break wait
						case d := <-clock.sleeping:
							fc.waitSleepers(t, 1, "the retry waiting on")
							fc.Advance(time.Hour) // let it go
							got = hangguard.Await(t, done, waitBound, "the retry")
							t.Fatalf("at 50s the retry waits %v more for the server's hold (sent at %v: %+v), want a give-up: 1m45s of holds, more than its minute",
								d, srv.arrivals(), got)
						case <-g.C:
							if g.Expired() {
								t.Fatalf("at 50s the retry neither returned nor waited on within %v", waitBound)
							}
						}
					}
					if at := srv.arrivals(); !slices.Equal(at, []time.Duration{0}) {
						t.Errorf("arrivals %v, want the first attempt only", at)
					}
					if !giveUpError {
						if got.err != nil || got.status != http.StatusTooManyRequests || got.body != "slow down" {
							t.Errorf("got %+v, want the refusal with its body", got)
						}
						return
					}
					var re *client.RetryError
					var we *client.WaitError
					if !errors.As(got.err, &re) || re.Reason != "retry would wait too long" || re.Attempts != 1 ||
						!errors.As(got.err, &we) || !we.Held || we.Wait != 105*time.Second {
						t.Errorf("got %+v, want a *RetryError (retry would wait too long, 1 attempt) wrapping a held *WaitError of 1m45s", got)
					}
				})
			}
		}
	}
}
