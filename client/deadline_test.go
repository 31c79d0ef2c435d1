package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// A context's deadline is real time, whatever the Transport's Clock: these
// tests give real deadlines hours away, and waits in virtual hours on
// either side of them.

// doWithin sends a GET whose context ends in real time after within (none
// when 0), and returns the status and the error.
func doWithin(hc *http.Client, u string, within time.Duration) (int, error) {
	ctx := context.Background()
	if within > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, within)
		defer cancel()
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// wantDeadlineWait checks that err is a *WaitError for the context's
// deadline, with the given wait and Held, matching ErrWaitTooLong and
// context.DeadlineExceeded, and reported as a timeout by the http.Client.
func wantDeadlineWait(t *testing.T, err error, wait time.Duration, held bool) {
	t.Helper()
	var we *client.WaitError
	if !errors.As(err, &we) {
		t.Fatalf("error %v, want a *WaitError", err)
	}
	if !we.Deadline || we.Held != held || we.Wait != wait {
		t.Errorf("WaitError %+v, want Deadline, Held %v, Wait %v", we, held, wait)
	}
	if !errors.Is(err, client.ErrWaitTooLong) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("%v does not match both ErrWaitTooLong and context.DeadlineExceeded", err)
	}
	if ue, ok := err.(*url.Error); !ok || !ue.Timeout() {
		t.Errorf("%v (%T): the http.Client does not report a timeout", err, err)
	}
	if !strings.Contains(err.Error(), "past its context deadline") {
		t.Errorf("message %q does not name the deadline", err.Error())
	}
}

// A request whose turn would come after its context's deadline fails at
// once, as x/time/rate's Limiter.Wait does, instead of waiting for the
// deadline to pass; its turn goes to the next request.
func TestTurnPastDeadlineFailsAtOnce(t *testing.T) {
	for _, proactive := range []bool{true, false} {
		t.Run(map[bool]string{true: "proactive", false: "reactive"}[proactive], func(t *testing.T) {
			clock := newFakeClock()
			srv := newStub(t, clock, nil)
			hc, _ := newClient(t, clock, client.WithRate(1, 2*time.Hour), client.WithMaxWait(10*time.Hour), client.WithProactive(proactive))
			var err error
			clock.drive(t, 1, func(int) {
				if _, err := doWithin(hc, srv.URL, 0); err != nil {
					t.Error(err)
				}
				// Its turn is at 2h, its deadline within the hour.
				_, err = doWithin(hc, srv.URL, time.Hour)
			})
			wantDeadlineWait(t, err, 2*time.Hour, false)
			if now := clock.Now(); !now.Equal(t0) {
				t.Errorf("refused at %v, want at once (0)", now.Sub(t0))
			}
			// The turn at 2h was given back: the next request takes it.
			clock.drive(t, 1, func(int) {
				if _, err := doWithin(hc, srv.URL, 0); err != nil {
					t.Error(err)
				}
			})
			if at, want := srv.arrivals(), []time.Duration{0, 2 * time.Hour}; !slices.Equal(at, want) {
				t.Errorf("arrivals %v, want %v", at, want)
			}
		})
	}
}

// A turn before the deadline is waited for as before.
func TestTurnBeforeDeadlineWaits(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, nil)
	hc, _ := newClient(t, clock, client.WithRate(1, 2*time.Hour), client.WithMaxWait(10*time.Hour))
	clock.drive(t, 2, func(i int) {
		if _, err := doWithin(hc, srv.URL, 3*time.Hour); err != nil {
			t.Errorf("request %d: %v", i, err)
		}
	})
	if at, want := srv.arrivals(), []time.Duration{0, 2 * time.Hour}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}

// A server's hold that ends after the deadline fails the request at once:
// both a hold met on arrival and one that a Retry-After sets while the
// request waits in the queue (it fails when it wakes to find its turn
// lost, not at its deadline).
func TestHoldPastDeadlineFailsAtOnce(t *testing.T) {
	t.Run("on arrival", func(t *testing.T) {
		clock := newFakeClock()
		srv := newStub(t, clock, refuse(1, http.StatusTooManyRequests, func() string { return "3600" }))
		hc, _ := newClient(t, clock, client.WithRate(10, time.Second), client.WithRetries(0),
			client.WithMaxRetryAfter(2*time.Hour), client.WithMaxWait(2*time.Hour))
		var err error
		clock.drive(t, 1, func(int) {
			if status, err := doWithin(hc, srv.URL, 0); err != nil || status != http.StatusTooManyRequests {
				t.Errorf("first request: %d %v, want the 429", status, err)
			}
			_, err = doWithin(hc, srv.URL, 30*time.Minute)
		})
		wantDeadlineWait(t, err, time.Hour, true)
		if now := clock.Now(); !now.Equal(t0) {
			t.Errorf("refused at %v, want at once (0)", now.Sub(t0))
		}
	})
	t.Run("while queued", func(t *testing.T) {
		clock := newFakeClock()
		// The second request (at 1h) is refused with a hold of 5h.
		srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
			if n == 2 {
				w.Header().Set("Retry-After", "18000")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			io.WriteString(w, "ok")
		})
		hc, _ := newClient(t, clock, client.WithRate(1, time.Hour), client.WithRetries(0),
			client.WithMaxRetryAfter(10*time.Hour), client.WithMaxWait(10*time.Hour))
		var err error
		var ended time.Duration
		clock.drive(t, 3, func(i int) {
			if i < 2 {
				if _, err := doWithin(hc, srv.URL, 0); err != nil {
					t.Errorf("request %d: %v", i, err)
				}
				return
			}
			// Queued for its turn at 2h, before its deadline; at 2h the hold
			// runs to 6h, past it.
			clock.Sleep(context.Background(), time.Millisecond)
			_, err = doWithin(hc, srv.URL, 150*time.Minute)
			ended = clock.Now().Sub(t0)
		})
		wantDeadlineWait(t, err, 6*time.Hour-time.Millisecond, true)
		if ended != 2*time.Hour {
			t.Errorf("refused at %v, want 2h, when it found its turn lost", ended)
		}
	})
}

// A retry whose turn would come after the deadline gives up at once, with
// the deadline as its reason.
func TestRetryTurnPastDeadlineGivesUp(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, refuse(1, http.StatusServiceUnavailable, func() string { return "0" }))
	// The backoff that Retry-After: 0 gets is 0 (the lowest draw): the
	// retry would go at once but for its turn.
	hc, _ := newClient(t, clock, client.WithRate(1, time.Hour), client.WithRetries(2),
		client.WithMaxWait(10*time.Hour), client.WithGiveUpError(), client.WithRandom(zeroSource{}))
	var err error
	clock.drive(t, 1, func(int) { _, err = doWithin(hc, srv.URL, 30*time.Minute) })
	var re *client.RetryError
	if !errors.As(err, &re) || re.Attempts != 1 || re.Reason != "retry would come after the context deadline" {
		t.Fatalf("error %v, want a RetryError after 1 attempt for the deadline", err)
	}
	var we *client.WaitError
	if !errors.As(err, &we) || !we.Deadline || we.Wait != time.Hour {
		t.Errorf("RetryError.Err %v, want the deadline's WaitError for a wait of 1h", re.Err)
	}
	if now := clock.Now(); !now.Equal(t0) {
		t.Errorf("gave up at %v, want at once (0)", now.Sub(t0))
	}
}

// A queued request that a Retry-After pushes to a turn past its deadline
// fails when it finds that out (at its old turn), and gives its new turn on
// as a cancelled one would: the requests behind it move up a turn each, the
// last turn goes back to the store (a later request takes it), and the line
// stays in order.
func TestDeadlineAfterHoldGivesTurnOn(t *testing.T) {
	defer client.CheckLines(func(why string) { t.Errorf("a line broke: %s", why) })()
	clock := newFakeClock()
	srv := newStub(t, clock, nil)
	hc, tr := newClient(t, clock, client.WithRate(1, time.Hour), client.WithRetries(0),
		client.WithMaxRetryAfter(10*time.Hour), client.WithMaxWait(20*time.Hour))
	key := strings.TrimPrefix(srv.URL, "http://")
	var err error
	var ended time.Duration
	clock.drive(t, 7, func(i int) {
		switch i {
		case 5:
			// At 30min a Retry-After holds the key until 3h: the turns at
			// 1h and 2h are lost.
			clock.Sleep(context.Background(), 30*time.Minute)
			tr.Observe(key, http.Header{"Retry-After": {"9000"}}, clock.Now())
			return
		case 6:
			// Arrives during the hold: it waits for it at the gate, then
			// takes the next turn, the one given back.
			clock.Sleep(context.Background(), time.Hour+time.Minute)
		default:
			if i > 0 {
				clock.Sleep(context.Background(), time.Duration(i)*time.Millisecond)
			}
		}
		if i == 1 {
			// Its turn at 1h, within the hold, moves to 3h: 2h away then,
			// past its deadline.
			_, err = doWithin(hc, srv.URL, 90*time.Minute)
			ended = clock.Now().Sub(t0)
			return
		}
		if _, err := doWithin(hc, srv.URL, 0); err != nil {
			t.Errorf("request %d: %v", i, err)
		}
	})
	wantDeadlineWait(t, err, 3*time.Hour-time.Millisecond, false)
	if ended != time.Hour {
		t.Errorf("refused at %v, want 1h, when it found its turn lost", ended)
	}
	want := []time.Duration{0, 3 * time.Hour, 4 * time.Hour, 5 * time.Hour, 6 * time.Hour}
	if at := srv.arrivals(); !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}

// A request that joins the queue with a turn a Retry-After has just made
// unusable (the hold began between its look for holds and its joining)
// fails at once when the hold's end is past its deadline or its maximum
// wait, rather than sleep until the turn it cannot use to find that out.
func TestTurnWithinKnownHoldFailsAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name    string
		maxWait time.Duration
		within  time.Duration // the context's deadline; 0: none
		want    func(*testing.T, error)
	}{
		{"deadline", 10 * time.Hour, 90 * time.Minute, func(t *testing.T, err error) { wantDeadlineWait(t, err, 2*time.Hour, true) }},
		{"max wait", 90 * time.Minute, 0, func(t *testing.T, err error) {
			var we *client.WaitError
			if !errors.As(err, &we) || we.Deadline || !we.Held || we.Wait != 2*time.Hour {
				t.Errorf("error %v, want a *WaitError for a hold of 2h, more than the maximum wait", err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer client.CheckLines(func(why string) { t.Errorf("a line broke: %s", why) })()
			clock := newFakeClock()
			srv := newStub(t, clock, nil)
			hc, tr := newClient(t, clock, client.WithRate(1, time.Hour), client.WithRetries(0),
				client.WithMaxRetryAfter(10*time.Hour), client.WithMaxWait(tc.maxWait))
			key := strings.TrimPrefix(srv.URL, "http://")
			// The second request takes its turn, at 1h, as a Retry-After
			// holds the key until 2h.
			defer client.AfterTurnTaken(func() {
				tr.Observe(key, http.Header{"Retry-After": {"7200"}}, clock.Now())
			})()
			var err error
			var ended time.Duration
			clock.drive(t, 1, func(int) {
				if _, err := doWithin(hc, srv.URL, 0); err != nil {
					t.Error(err)
				}
				_, err = doWithin(hc, srv.URL, tc.within)
				ended = clock.Now().Sub(t0)
			})
			tc.want(t, err)
			if ended != 0 {
				t.Errorf("refused at %v, want at once (0)", ended)
			}
			if at, want := srv.arrivals(), []time.Duration{0}; !slices.Equal(at, want) {
				t.Errorf("arrivals %v, want %v", at, want)
			}
		})
	}
}
