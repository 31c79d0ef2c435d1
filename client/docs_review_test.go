package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// A rate-limited 403's Retry-After holds the other requests of its key, as
// a 429's or a 503's does (WithProactive's doc named only those two): the
// 403 given up on at once (no retries) still holds the next request until
// its Retry-After has passed. A plain 403 holds nothing, nor does a
// Retry-After with proactive pacing off.
func TestRateLimited403RetryAfterHoldsTheKey(t *testing.T) {
	for _, tc := range []struct {
		name      string
		status    int
		proactive bool
		second    time.Duration // when the second request arrives
	}{
		{"403 with Retry-After", http.StatusForbidden, true, 3 * time.Second},
		{"429 with Retry-After", http.StatusTooManyRequests, true, 3 * time.Second},
		{"503 with Retry-After", http.StatusServiceUnavailable, true, 3 * time.Second},
		{"403 with Retry-After, proactive off", http.StatusForbidden, false, 0},
		{"plain 403", 0, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newAutoClock()
			srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				switch {
				case n > 1:
					io.WriteString(w, "ok")
				case tc.status == 0:
					w.WriteHeader(http.StatusForbidden)
				default:
					w.Header().Set("Retry-After", "3")
					w.WriteHeader(tc.status)
				}
			})
			hc, _ := newClient(t, clock, client.WithRetries(0), client.WithProactive(tc.proactive))
			want := []int{orElse(tc.status, http.StatusForbidden), http.StatusOK}
			for i := range 2 {
				status, _, err := get(hc, srv.URL)
				if err != nil || status != want[i] {
					t.Fatalf("request %d: %d %v, want %d", i+1, status, err, want[i])
				}
			}
			if at := srv.arrivals(); len(at) != 2 || at[0] != 0 || at[1] != tc.second {
				t.Errorf("arrivals %v, want [0s %v]", at, tc.second)
			}
		})
	}
}

// orElse returns a, or b when a is 0.
func orElse(a, b int) int {
	if a == 0 {
		return b
	}
	return a
}

// A 403 is a rate-limit refusal only when its fields say when to come back:
// a Retry-After, or no quota left until a reset still to come. No quota
// left with no reset, with a reset gone by, or with an IETF policy that
// has neither t nor a window in RateLimit-Policy is the server's answer,
// returned at once (the package doc and the README said "no quota left",
// the reset unsaid). With a reset to come, it is retried after it.
func TestRateLimited403NeedsAResetToCome(t *testing.T) {
	for _, tc := range []struct {
		name     string
		header   func(now time.Time) http.Header
		attempts int
	}{
		{"no quota left, no reset", func(time.Time) http.Header {
			return http.Header{"X-Ratelimit-Remaining": {"0"}}
		}, 1},
		{"no quota left, reset gone by", func(now time.Time) http.Header {
			return http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(now.Add(-5*time.Second).Unix(), 10)}}
		}, 1},
		{"IETF r=0, neither t nor w", func(time.Time) http.Header {
			return http.Header{"Ratelimit": {`"default";r=0`}}
		}, 1},
		{"IETF r=0, w in RateLimit-Policy", func(time.Time) http.Header {
			return http.Header{"Ratelimit": {`"default";r=0`}, "Ratelimit-Policy": {`"default";q=5;w=2`}}
		}, 2},
		{"no quota left, reset to come", func(now time.Time) http.Header {
			return http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {strconv.FormatInt(now.Add(5*time.Second).Unix(), 10)}}
		}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newAutoClock()
			srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					for k, v := range tc.header(clock.Now()) {
						w.Header()[k] = v
					}
					w.WriteHeader(http.StatusForbidden)
					return
				}
				io.WriteString(w, "ok")
			})
			hc, _ := newClient(t, clock)
			status, _, err := get(hc, srv.URL)
			want := http.StatusForbidden
			if tc.attempts > 1 {
				want = http.StatusOK
			}
			if err != nil || status != want {
				t.Errorf("got %d %v, want %d", status, err, want)
			}
			if at := srv.arrivals(); len(at) != tc.attempts {
				t.Errorf("%d attempts (%v), want %d", len(at), at, tc.attempts)
			}
		})
	}
}

// DefaultMaxWait is a minute, in numbers (the tests elsewhere name the
// constant, and one of 61s survived them): without WithMaxWait a server's
// hold of 60s is waited out, one of 61s fails at once with a *WaitError
// (the holds are not cut to the maximum Retry-After here, an hour), and
// the pacing queue's bound, the Spec's MaxDelay, is 60s.
func TestDefaultMaxWaitInNumbers(t *testing.T) {
	for _, tc := range []struct {
		t    string // the RateLimit field's t, the hold
		wait time.Duration
		ok   bool
	}{
		{"60", time.Minute, true},
		{"61", 0, false},
	} {
		clock := newAutoClock()
		srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
			if n == 1 {
				w.Header().Set("RateLimit", `"a";r=0;t=`+tc.t)
			}
			io.WriteString(w, "ok")
		})
		hc, _ := newClient(t, clock, client.WithMaxRetryAfter(time.Hour))
		if status, _, err := get(hc, srv.URL); err != nil || status != http.StatusOK {
			t.Fatalf("t=%s: first request %d %v", tc.t, status, err)
		}
		_, _, err := get(hc, srv.URL)
		var we *client.WaitError
		switch {
		case tc.ok && err != nil:
			t.Errorf("t=%s: %v, want the hold waited out", tc.t, err)
		case tc.ok:
			if at := srv.arrivals(); len(at) != 2 || at[1] != tc.wait {
				t.Errorf("t=%s: arrivals %v, want the second at %v", tc.t, at, tc.wait)
			}
		case !errors.As(err, &we) || !we.Held || we.MaxWait != 60*time.Second || we.Wait != 61*time.Second:
			t.Errorf("t=%s: %v, want a *WaitError: a hold of 61s, more than the maximum wait of 60s", tc.t, err)
		}
	}
	_, tr := newClient(t, newAutoClock(), client.WithRate(5, time.Second))
	if spec, ok := tr.Spec(); !ok || spec.MaxDelay != 60*time.Second {
		t.Errorf("Spec %v %v, want a MaxDelay of 60s", spec, ok)
	}
}

// A caller that leaves the queue (its context ended) moves the requests
// behind it up a turn each with proactive pacing (the default), and only
// then: without it, its turn goes back to the store, which takes it only
// when nothing queued behind it, so the request behind keeps its own turn.
// The package doc said the requests behind move up, without the proviso
// the Transport's doc has. At 1 per 10s, A queues for 10s and B for 20s; A
// leaves: B goes at 10s with proactive pacing, at 20s without.
func TestLeaverMovesUpOnlyWithProactive(t *testing.T) {
	for _, tc := range []struct {
		proactive bool
		b         time.Duration
	}{
		{true, 10 * time.Second},
		{false, 20 * time.Second},
	} {
		clock := newFakeClock()
		srv := newStub(t, clock, nil)
		_, tr := newClient(t, clock, client.WithRate(1, 10*time.Second), client.WithProactive(tc.proactive))
		send := func(ctx context.Context) error { return roundTrip(ctx, tr, srv.URL, "") }
		if err := send(context.Background()); err != nil { // at once
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		clock.drive(t, 3, func(i int) {
			switch i {
			case 0: // A: turn at 10s; leaves
				if err := send(ctx); !errors.Is(err, context.Canceled) {
					t.Errorf("proactive %v: A got %v, want context.Canceled", tc.proactive, err)
				}
			case 1: // B: turn at 20s
				if !awaitSleepers(t, clock, 1, "A waiting for its turn") {
					return
				}
				if err := send(context.Background()); err != nil {
					t.Errorf("proactive %v: B: %v", tc.proactive, err)
				}
			case 2:
				if awaitSleepers(t, clock, 2, "A and B waiting for their turns") {
					cancel()
				}
			}
		})
		if at := srv.arrivals(); len(at) != 2 || at[1] != tc.b {
			t.Errorf("proactive %v: arrivals %v, want B at %v", tc.proactive, at, tc.b)
		}
	}
}
