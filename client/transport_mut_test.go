package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// A retry that took its place at the gate for the server's hold and then
// cannot rewind its body gives the place up: the request after it, which
// arrives during the hold, is sent when the hold has passed. With pacing,
// a PUT refused at 0 with Retry-After: 1 fails on GetBody; a GET sent next
// waits for the hold and goes at 1s. Without the place given up
// (transport.go:184's tk.leave() deleted) the GET waited behind it for
// ever.
func TestRewindFailureLeavesTheGate(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, refuse(1, http.StatusTooManyRequests, func() string { return "1" }))
	_, tr := newClient(t, clock, client.WithRate(10, time.Second))
	req, _ := http.NewRequest(http.MethodPut, srv.URL, strings.NewReader("x"))
	boom := errors.New("boom")
	req.GetBody = func() (io.ReadCloser, error) { return nil, boom }
	if _, err := tr.RoundTrip(req); !errors.Is(err, boom) {
		t.Fatalf("PUT: %v, want the GetBody error", err)
	}
	var err error
	guard(t, "the GET is sent after the hold (it waits behind the PUT's place at the gate)", func() {
		err = roundTrip(context.Background(), tr, srv.URL, "")
	})
	if err != nil {
		t.Fatal(err)
	}
	if at, want := srv.arrivals(), []time.Duration{0, time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}

// A retry whose place at the gate was used for one hold waits the next
// time as that time asks: a request refused with Retry-After: 1 (its retry
// waits for the hold at the gate), then with a 503 without one (a backoff, its
// second: 500ms with the largest draw), is sent at 0, 1s and 1.5s. With the used
// place kept (transport.go:189's tk = nil deleted) the third attempt took
// it for a place at the gate, skipped its backoff and went at its next
// turn, 1.1s.
func TestRetryAfterHoldThenBackoff(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, _ *http.Request) {
		switch n {
		case 1:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		case 2:
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			io.WriteString(w, "ok")
		}
	})
	hc, _ := newClient(t, clock, client.WithRate(10, time.Second), client.WithRandom(maxSource{}))
	if status, _, err := get(hc, srv.URL); err != nil || status != http.StatusOK {
		t.Fatalf("got %d %v, want 200", status, err)
	}
	if at, want := srv.arrivals(), []time.Duration{0, time.Second, 1500 * time.Millisecond}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}

// A wait of exactly the maximum the server may ask for is honoured: "asks
// for more" than WithMaxRetryAfter is what gives up, in Retry-After or in
// the RateLimit fields. With a maximum of 2m, a 429 with Retry-After: 120,
// or without one but with a RateLimit field announcing no quota for 120s,
// is retried 2m later. Kills transport.go:232's ra >= t.maxRetryAfter and
// :234's serverHold >= t.maxRetryAfter (each gave up at once with the 429).
func TestRetryAfterAtTheCap(t *testing.T) {
	for _, h := range [][2]string{{"Retry-After", "120"}, {"RateLimit", `"p";r=0;t=120`}} {
		clock := newAutoClock()
		srv := newStub(t, clock, func(n int, w http.ResponseWriter, _ *http.Request) {
			if n == 1 {
				w.Header().Set(h[0], h[1])
				w.WriteHeader(http.StatusTooManyRequests)
			}
		})
		hc, _ := newClient(t, clock, client.WithMaxRetryAfter(2*time.Minute), client.WithMaxWait(2*time.Minute))
		if status, _, err := get(hc, srv.URL); err != nil || status != http.StatusOK {
			t.Fatalf("%s: %s: got %d %v, want 200 after the retry", h[0], h[1], status, err)
		}
		if at, want := srv.arrivals(), []time.Duration{0, 2 * time.Minute}; !slices.Equal(at, want) {
			t.Errorf("%s: %s: arrivals %v, want %v", h[0], h[1], at, want)
		}
	}
}

// A backoff is no wait the server asked for: the maximum wait, which bounds
// the holds, does not bound it. With WithMaxWait(0) and without proactive
// pacing, a 503 without Retry-After is retried after its backoff (250ms
// with the largest draw). Kills transport.go:245's held = 1 (a backoff
// counted as 1ns of hold: beyond a maximum of 0, it gave up with the 503).
func TestBackoffNotBoundedByMaxWait(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, refuse(1, http.StatusServiceUnavailable, nil))
	hc, _ := newClient(t, clock, client.WithMaxWait(0), client.WithProactive(false), client.WithRandom(maxSource{}))
	if status, _, err := get(hc, srv.URL); err != nil || status != http.StatusOK {
		t.Fatalf("got %d %v, want 200 after the retry", status, err)
	}
	if at, want := srv.arrivals(), []time.Duration{0, 250 * time.Millisecond}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}
