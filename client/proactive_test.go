package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// hint answers the first request with the given headers (and 200), the
// rest with a bare 200.
func hint(kv ...string) func(int, http.ResponseWriter, *http.Request) {
	return func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			for i := 0; i+1 < len(kv); i += 2 {
				w.Header().Add(kv[i], kv[i+1])
			}
		}
		io.WriteString(w, "ok")
	}
}

// When a response says no quota is left, the next request to that host
// waits for the announced reset instead of earning a 429; each header
// profile is understood.
func TestProactivePacing(t *testing.T) {
	unix := strconv.FormatInt(t0.Add(9*time.Second).Unix(), 10)
	for _, tc := range []struct {
		name string
		kv   []string
		want time.Duration
	}{
		{"draft-11", []string{"RateLimit-Policy", `"default";q=10;w=60`, "RateLimit", `"default";r=0;t=5`}, 5 * time.Second},
		{"draft-11 several", []string{"RateLimit", `"sec";r=4;t=1, "day";r=0;t=7`}, 7 * time.Second},
		{"draft-11 window", []string{"RateLimit-Policy", `"min";q=10;w=30`, "RateLimit", `"min";r=0`}, 30 * time.Second},
		{"draft-7", []string{"RateLimit", "limit=10, remaining=0, reset=4", "RateLimit-Policy", "10;w=60"}, 4 * time.Second},
		{"draft-6", []string{"RateLimit-Limit", "10", "RateLimit-Remaining", "0", "RateLimit-Reset", "3"}, 3 * time.Second},
		{"legacy delta", []string{"X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "2"}, 2 * time.Second},
		{"legacy unix", []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", unix}, 9 * time.Second},
		{"quota left", []string{"RateLimit", `"default";r=1;t=5`}, 0},
		{"malformed", []string{"RateLimit", `"default";r=0;t=five`}, 0},
		{"cached", []string{"Age", "30", "RateLimit", `"default";r=0;t=5`}, 0},
		{"capped", []string{"RateLimit", `"day";r=0;t=86400`}, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newAutoClock()
			srv := newStub(t, clock, hint(tc.kv...))
			hc, _ := newClient(t, clock, client.WithMaxWait(time.Hour))
			for range 2 {
				if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
					t.Fatalf("got %d %v", status, err)
				}
			}
			if at, want := srv.arrivals(), []time.Duration{0, tc.want}; !slices.Equal(at, want) {
				t.Errorf("arrivals %v, want %v", at, want)
			}
		})
	}
}

// Proactive pacing can be turned off.
func TestProactiveOff(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, hint("RateLimit", `"default";r=0;t=5`))
	hc, _ := newClient(t, clock, client.WithProactive(false))
	for range 2 {
		if _, _, err := get(hc, srv.URL); err != nil {
			t.Fatal(err)
		}
	}
	if at, want := srv.arrivals(), []time.Duration{0, 0}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}

// A hold applies to its key only.
func TestHoldPerKey(t *testing.T) {
	clock := newAutoClock()
	a := newStub(t, clock, hint("RateLimit", `"default";r=0;t=5`))
	b := newStub(t, clock, nil)
	hc, _ := newClient(t, clock)
	for _, url := range []string{a.URL, b.URL} {
		if _, _, err := get(hc, url); err != nil {
			t.Fatal(err)
		}
	}
	if got := clock.Sleeps(); len(got) != 0 {
		t.Errorf("slept %v: the hold on one host delayed another", got)
	}
}

// The Retry-After of a 429 holds the other callers to that host too, and it
// takes precedence over the RateLimit field of the same response.
func TestRetryAfterHoldsOthers(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			w.Header().Set("Retry-After", "4")
			w.Header().Set("RateLimit", `"default";r=0;t=9`)
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.WriteString(w, "ok")
	})
	hc, _ := newClient(t, clock)
	// Caller 0 is refused at 0s and retries after 4s; caller 1 comes at 1s
	// and waits for the same instant (not for the RateLimit t of 9s).
	clock.drive(2, func(i int) {
		if i == 1 {
			clock.Sleep(context.Background(), time.Second)
		}
		if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
			t.Errorf("caller %d: got %d %v", i, status, err)
		}
	})
	if at, want := srv.arrivals(), []time.Duration{0, 4 * time.Second, 4 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}

// A caller arriving during a hold waits for it to pass.
func TestCallerWaitsForHold(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, hint("RateLimit", `"default";r=0;t=3`))
	hc, _ := newClient(t, clock)
	clock.drive(1, func(int) { get(hc, srv.URL) })
	clock.Advance(time.Second)
	clock.drive(3, func(int) {
		if _, _, err := get(hc, srv.URL); err != nil {
			t.Error(err)
		}
	})
	if at, want := srv.arrivals(), []time.Duration{0, 3 * time.Second, 3 * time.Second, 3 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}

// A hold longer than the maximum wait fails at once with a held *WaitError.
func TestHoldBeyondMaxWait(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, hint("RateLimit", `"default";r=0;t=30`))
	hc, _ := newClient(t, clock, client.WithMaxWait(10*time.Second))
	if _, _, err := get(hc, srv.URL); err != nil {
		t.Fatal(err)
	}
	_, _, err := get(hc, srv.URL)
	var we *client.WaitError
	if !errors.As(err, &we) || !we.Held || we.Wait != 30*time.Second || we.MaxWait != 10*time.Second {
		t.Fatalf("error %v, want a held WaitError of 30s", err)
	}
	if n := len(srv.arrivals()); n != 1 {
		t.Errorf("stub received %d, want 1", n)
	}
}

// A 429 without Retry-After whose RateLimit field says when quota returns
// is retried then, not after a shorter backoff.
func TestRetryWaitsForRateLimitReset(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			w.Header().Set("RateLimit", `"default";r=0;t=6`)
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.WriteString(w, "ok")
	})
	var retries []client.Retry
	hc, _ := newClient(t, clock, client.WithRandom(maxSource{}), client.WithBackoff(time.Second, time.Second),
		client.WithOnRetry(func(r client.Retry) { retries = append(retries, r) }))
	if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
		t.Fatalf("got %d %v", status, err)
	}
	if at, want := srv.arrivals(), []time.Duration{0, 6 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
	if len(retries) != 1 || retries[0].Wait != 6*time.Second || retries[0].RetryAfter {
		t.Errorf("retries %+v, want one wait of 6s", retries)
	}
}

// The context ends the waits for a server's hold and between retries too,
// at once and in virtual time.
func TestContextCancelledDuringHoldAndRetry(t *testing.T) {
	for _, tc := range []struct {
		name    string
		respond func(int, http.ResponseWriter, *http.Request)
		sent    int // requests the stub sees before the cancellation
	}{
		{"retry wait", refuse(10, http.StatusTooManyRequests, func() string { return "30" }), 1},
		{"hold", hint("RateLimit", `"default";r=0;t=30`), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			srv := newStub(t, clock, tc.respond)
			_, tr := newClient(t, clock)
			if tc.name == "hold" {
				// The first request brings the hold.
				clock.drive(1, func(int) {
					req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
					resp, err := tr.RoundTrip(req)
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
				})
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
				resp, err := tr.RoundTrip(req)
				if resp != nil {
					resp.Body.Close()
				}
				done <- err
			}()
			clock.waitSleepers(1)
			at := clock.Now()
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("RoundTrip = %v, want context.Canceled", err)
			}
			if !clock.Now().Equal(at) {
				t.Errorf("virtual time moved")
			}
			if got := len(srv.arrivals()); got != tc.sent {
				t.Errorf("stub received %d, want %d", got, tc.sent)
			}
		})
	}
}

// A server's Retry-After holds the requests already waiting for their turn
// in the queue too: the server asked for no requests before then, and one
// sent anyway only earns another 429. Here the stub refuses everything it
// receives in its first 2s; the 6 callers queued 200ms apart give their
// turns up at the refusal and queue again when the hold ends, so the stub
// sees nothing during its hold and refuses only the first request.
func TestRetryAfterHoldsQueuedCallers(t *testing.T) {
	clock := newFakeClock()
	var mu sync.Mutex
	var refused []time.Duration
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			// Answer once the five other callers have taken their turns
			// (and sleep in the clock), so that the hold meets them queued.
			clock.waitSleepers(5)
		}
		if d := 2*time.Second - clock.Now().Sub(t0); d > 0 {
			mu.Lock()
			refused = append(refused, clock.Now().Sub(t0))
			mu.Unlock()
			w.Header().Set("Retry-After", strconv.FormatInt(int64((d+time.Second-1)/time.Second), 10))
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.WriteString(w, "ok")
	})
	hc, _ := newClient(t, clock, client.WithRate(5, time.Second), client.WithMaxWait(10*time.Second))
	clock.drive(6, func(i int) {
		if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
			t.Errorf("caller %d: got %d %v", i, status, err)
		}
	})
	want := []time.Duration{0, 2000 * time.Millisecond, 2200 * time.Millisecond, 2400 * time.Millisecond,
		2600 * time.Millisecond, 2800 * time.Millisecond, 3000 * time.Millisecond}
	if at := srv.arrivals(); !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []time.Duration{0}; !slices.Equal(refused, want) {
		t.Errorf("the stub refused requests at %v, want only the first, at %v", refused, want)
	}
}

// A queued caller that meets a Retry-After hold longer than its maximum wait
// fails at once with a held *WaitError and is never sent; the refused
// request itself is retried after the Retry-After as usual.
func TestRetryAfterHoldBeyondMaxWaitForQueuedCallers(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			// Answer once the two other callers have taken their turns
			// (and sleep in the clock), so that the hold meets them queued.
			clock.waitSleepers(2)
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.WriteString(w, "ok")
	})
	hc, _ := newClient(t, clock, client.WithRate(5, time.Second), client.WithMaxWait(time.Second))
	var mu sync.Mutex
	var held []time.Duration
	clock.drive(3, func(i int) {
		status, _, err := get(hc, srv.URL)
		var we *client.WaitError
		switch {
		case err == nil && status == 200:
		case errors.As(err, &we) && we.Held && we.MaxWait == time.Second:
			mu.Lock()
			held = append(held, we.Wait)
			mu.Unlock()
		default:
			t.Errorf("caller %d: got %d %v", i, status, err)
		}
	})
	slices.Sort(held)
	// Turns at 200ms and 400ms; the hold lasts until 5s.
	if want := []time.Duration{4600 * time.Millisecond, 4800 * time.Millisecond}; !slices.Equal(held, want) {
		t.Errorf("held WaitErrors with waits %v, want %v", held, want)
	}
	if at, want := srv.arrivals(), []time.Duration{0, 5 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}
