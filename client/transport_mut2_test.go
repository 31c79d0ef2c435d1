package client_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// A retry's wait of 1ns is waited for, and one of 0 is no sleep at all
// (the Clock's contract: the Transport never calls Sleep with d <= 0).
// Without pacing, a 503 with a backoff of 1ns (the ceiling, with the
// highest draw) is retried 1ns later, after one Sleep of 1ns; one with a
// backoff of 0 (the lowest draw; Retry-After: 0 gets the backoff too) at
// once, without a Sleep. Kills transport.go:281's wait > 1 (the retry sent
// with the first, at 0) and wait >= 0 (a Sleep of 0).
func TestRetryWaitsOfZeroAndOneNanosecond(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ra     func() string
		src    rand.Source
		at     []time.Duration
		sleeps []time.Duration
	}{
		{"backoff 1ns", nil, maxSource{}, []time.Duration{0, time.Nanosecond}, []time.Duration{time.Nanosecond}},
		{"Retry-After 0, backoff 0", func() string { return "0" }, zeroSource{}, []time.Duration{0, 0}, nil},
	} {
		clock := newAutoClock()
		srv := newStub(t, clock, refuse(1, http.StatusServiceUnavailable, tc.ra))
		hc, _ := newClient(t, clock, client.WithRandom(tc.src), client.WithBackoff(time.Nanosecond, time.Nanosecond))
		if status, _, err := get(hc, srv.URL); err != nil || status != http.StatusOK {
			t.Fatalf("%s: got %d %v, want 200 after the retry", tc.name, status, err)
		}
		if at := srv.arrivals(); !slices.Equal(at, tc.at) {
			t.Errorf("%s: arrivals %v, want %v", tc.name, at, tc.at)
		}
		if got := clock.Sleeps(); !slices.Equal(got, tc.sleeps) {
			t.Errorf("%s: slept %v, want %v", tc.name, got, tc.sleeps)
		}
	}
}

// A 403 whose rate-limit fields announce no quota left for 1ns more is
// rate-limited, and retried as a 429 is, once the hold has passed. The
// clock is 1ns before a whole second and X-RateLimit-Reset names that
// second: the 403 is retried 1ns later and the 200 returned. Kills
// transport.go:314's serverHold(…) > 1 (the 403 returned at once).
func TestRateLimited403HeldOneNanosecond(t *testing.T) {
	clock := newAutoClock()
	clock.Advance(time.Second - time.Nanosecond)
	reset := strconv.FormatInt(t0.Add(time.Second).Unix(), 10)
	var at []time.Duration
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		at = append(at, clock.Now().Sub(t0))
		if len(at) == 1 {
			h := http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {reset}}
			return &http.Response{StatusCode: http.StatusForbidden, Header: h, Body: http.NoBody, Request: r}, nil
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	tr, err := client.New(next, client.WithClock(clock), client.WithRandom(zeroSource{})) // no backoff beyond the hold
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://api.example/", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("got %v, %v; want the 200 after a retry", resp, err)
	}
	resp.Body.Close()
	if want := []time.Duration{time.Second - time.Nanosecond, time.Second}; !slices.Equal(at, want) {
		t.Errorf("sent at %v, want %v", at, want)
	}
}

// A retry that waits 1ns for the server's hold takes its place at the gate
// then, as for any hold, ahead of the requests that arrive during it. At
// one per second: R is sent at 0 and refused with retry-after-ms:
// 0.000001 (a hold of 1ns); B arrives while R waits for the hold and waits
// for it too. R is sent again at 1s, and B at 2s. Kills transport.go:268's
// wait > 1 (R slept out the 1ns outside the gate, and B, at the gate
// first, took the turn at 1s).
func TestRetryHeldOneNanosecondAheadAtGate(t *testing.T) {
	clock := newFakeClock()
	var mu sync.Mutex
	var callers []string
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			w.Header().Set("Retry-After-Ms", "0.000001")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		mu.Lock()
		callers = append(callers, r.Header.Get("X-Caller"))
		mu.Unlock()
	})
	_, tr := newClient(t, clock, client.WithRate(1, time.Second))
	clock.drive(t, 2, func(i int) {
		caller := "R"
		if i == 1 {
			caller = "B"
			// R asleep, waiting for its hold: time stands still meanwhile.
			if !awaitAsleep(t, clock, 1, "R waiting for its hold") {
				return
			}
		}
		if err := roundTrip(context.Background(), tr, srv.URL, caller); err != nil {
			t.Errorf("%s: %v", caller, err)
		}
	})
	if want := []time.Duration{0, time.Second, 2 * time.Second}; !slices.Equal(srv.arrivals(), want) {
		t.Errorf("arrivals %v, want %v", srv.arrivals(), want)
	}
	if want := []string{"R", "B"}; !slices.Equal(callers, want) {
		t.Errorf("sent after the hold: %v, want %v", callers, want)
	}
}
