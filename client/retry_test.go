package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/client"
)

// maxSource always returns the largest value: every backoff is its ceiling.
type maxSource struct{}

func (maxSource) Uint64() uint64 { return ^uint64(0) }

// zeroSource always returns 0: every backoff is 0.
type zeroSource struct{}

func (zeroSource) Uint64() uint64 { return 0 }

// refuse answers 429 (or status) to the first n requests, with the
// Retry-After value ra when it is not empty, then 200 "ok".
func refuse(n int, status int, ra func() string) func(int, http.ResponseWriter, *http.Request) {
	return func(i int, w http.ResponseWriter, r *http.Request) {
		if i <= n {
			if ra != nil {
				w.Header().Set("Retry-After", ra())
			}
			w.WriteHeader(status)
			io.WriteString(w, "slow down")
			return
		}
		io.WriteString(w, "ok")
	}
}

// Seed 001: a client that gets 429 waits for Retry-After, then retries.
func TestRetryAfterSeconds(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, refuse(2, http.StatusTooManyRequests, func() string { return "3" }))
	var retries []client.Retry
	hc, _ := newClient(t, clock, client.WithOnRetry(func(r client.Retry) { retries = append(retries, r) }))
	status, body, err := get(hc, srv.URL)
	if err != nil || status != 200 || body != "ok" {
		t.Fatalf("got %d %q %v, want 200 ok", status, body, err)
	}
	if at, want := srv.arrivals(), []time.Duration{0, 3 * time.Second, 6 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
	if len(retries) != 2 || retries[0].Attempt != 1 || retries[1].Attempt != 2 ||
		retries[0].Wait != 3*time.Second || !retries[0].RetryAfter || retries[0].Status != 429 {
		t.Errorf("retries %+v", retries)
	}
}

// The millisecond forms of Retry-After (Azure, OpenAI) are read before it:
// the retry waits as precisely as the server asked.
func TestRetryAfterMillis(t *testing.T) {
	for _, tc := range []struct {
		kv   []string
		want time.Duration
	}{
		{[]string{"retry-after-ms", "1500", "Retry-After", "2"}, 1500 * time.Millisecond},
		{[]string{"x-ms-retry-after-ms", "250.5", "Retry-After", "1"}, 250500 * time.Microsecond},
		{[]string{"retry-after-ms", "soon", "Retry-After", "2"}, 2 * time.Second},
	} {
		retriedAfter(t, tc.kv, tc.want)
	}
}

// retriedAfter has a server refuse the first request with 429 and the
// header fields kv (name, value, ...), and checks that the Transport of
// opts retried it once, after want, the wait the server asked for.
func retriedAfter(t *testing.T, kv []string, want time.Duration, opts ...client.Option) {
	t.Helper()
	clock := newAutoClock()
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			for i := 0; i+1 < len(kv); i += 2 {
				w.Header().Set(kv[i], kv[i+1])
			}
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.WriteString(w, "ok")
	})
	var got []client.Retry
	hc, _ := newClient(t, clock, append(opts, client.WithOnRetry(func(r client.Retry) { got = append(got, r) }))...)
	if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
		t.Fatalf("%v: got %d %v", kv, status, err)
	}
	if len(got) != 1 || !got[0].RetryAfter || got[0].Wait != want {
		t.Errorf("%v: retries %+v, want one of %v from the server", kv, got, want)
	}
	if at, want := srv.arrivals(), []time.Duration{0, want}; !slices.Equal(at, want) {
		t.Errorf("%v: arrivals %v, want %v", kv, at, want)
	}
}

// A retry-after-ms beyond WithMaxRetryAfter gives up at once, as a
// Retry-After beyond it does, even when a Retry-After within it is sent too
// (the more precise field wins).
func TestRetryAfterMillisBeyondCap(t *testing.T) {
	for _, ms := range []string{"120000", "99999999999999999999999999"} {
		clock := newAutoClock()
		srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
			w.Header().Set("retry-after-ms", ms)
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		})
		hc, _ := newClient(t, clock, client.WithMaxRetryAfter(time.Minute), client.WithGiveUpError())
		_, _, err := get(hc, srv.URL)
		var re *client.RetryError
		if !errors.As(err, &re) || re.Attempts != 1 || re.Reason != "Retry-After exceeds the maximum" {
			t.Errorf("retry-after-ms %s: error %v, want a give-up after 1 attempt", ms, err)
		}
		if got := clock.Sleeps(); len(got) != 0 {
			t.Errorf("retry-after-ms %s: slept %v", ms, got)
		}
	}
}

// Retry-After as an HTTP-date is taken relative to the injected clock; a
// date in the past means retry at once.
func TestRetryAfterHTTPDate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		offset time.Duration
		format string
		want   time.Duration
	}{
		{"IMF-fixdate", 7 * time.Second, http.TimeFormat, 7 * time.Second},
		{"RFC 850", 4 * time.Second, time.RFC850, 4 * time.Second},
		{"asctime", 2 * time.Second, time.ANSIC, 2 * time.Second},
		// A date past: TestRetryAfterZeroBacksOff.
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newAutoClock()
			srv := newStub(t, clock, refuse(1, http.StatusServiceUnavailable, func() string {
				return clock.Now().Add(tc.offset).UTC().Format(tc.format)
			}))
			hc, _ := newClient(t, clock)
			if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
				t.Fatalf("got %d %v", status, err)
			}
			if at, want := srv.arrivals(), []time.Duration{0, tc.want}; !slices.Equal(at, want) {
				t.Errorf("arrivals %v, want %v", at, want)
			}
		})
	}
}

// Without Retry-After the waits grow exponentially, each at most its
// ceiling min(max, base·2^(k−1)); with a source at its largest value each
// wait is exactly the ceiling, with one at 0 each is 0.
func TestBackoffCeilings(t *testing.T) {
	for _, tc := range []struct {
		name      string
		src       rand.Source
		base, max time.Duration
		retries   int
		want      []time.Duration
	}{
		{"doubling", maxSource{}, 100 * time.Millisecond, time.Second, 4,
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond}},
		{"capped", maxSource{}, time.Second, 3 * time.Second, 5,
			[]time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second, 3 * time.Second}},
		// The second ceiling is base·2, below max by a nanosecond, not max.
		{"max a nanosecond above a doubling", maxSource{}, 100 * time.Millisecond, 200*time.Millisecond + 1, 3,
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 200*time.Millisecond + 1}},
		{"zero", zeroSource{}, time.Second, 3 * time.Second, 3, []time.Duration{0, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newAutoClock()
			srv := newStub(t, clock, refuse(100, http.StatusServiceUnavailable, nil))
			hc, _ := newClient(t, clock, client.WithRandom(tc.src), client.WithBackoff(tc.base, tc.max), client.WithRetries(tc.retries))
			status, _, err := get(hc, srv.URL)
			if err != nil || status != http.StatusServiceUnavailable {
				t.Fatalf("got %d %v, want the last 503", status, err)
			}
			if got := len(srv.arrivals()); got != tc.retries+1 {
				t.Errorf("%d attempts, want %d", got, tc.retries+1)
			}
			var got []time.Duration
			for _, d := range clock.Sleeps() {
				if d > 0 {
					got = append(got, d)
				}
			}
			want := tc.want
			if tc.name == "zero" {
				want = nil
			}
			if !slices.Equal(got, want) {
				t.Errorf("waits %v, want %v", got, want)
			}
		})
	}
}

// With a random source, every wait lies in [0, ceiling] and they differ
// (the jitter spreads clients out).
func TestBackoffJitterBounds(t *testing.T) {
	clock := newAutoClock()
	var waits []client.Retry
	srv := newStub(t, clock, refuse(1000, http.StatusTooManyRequests, nil))
	hc, _ := newClient(t, clock, client.WithRandom(rand.NewPCG(1, 2)), client.WithRetries(6),
		client.WithBackoff(50*time.Millisecond, time.Second),
		client.WithOnRetry(func(r client.Retry) { waits = append(waits, r) }))
	distinct := map[time.Duration]bool{}
	for range 40 {
		if status, _, err := get(hc, srv.URL); err != nil || status != 429 {
			t.Fatalf("got %d %v", status, err)
		}
	}
	if len(waits) != 40*6 {
		t.Fatalf("%d retries, want %d", len(waits), 40*6)
	}
	for _, w := range waits {
		ceiling := min(time.Second, 50*time.Millisecond<<(w.Attempt-1))
		if w.Wait < 0 || w.Wait > ceiling || w.RetryAfter {
			t.Errorf("attempt %d waited %v, want within [0, %v]", w.Attempt, w.Wait, ceiling)
		}
		distinct[w.Wait] = true
	}
	if len(distinct) < len(waits)/2 {
		t.Errorf("only %d distinct waits in %d", len(distinct), len(waits))
	}
}

// Seed 001: retry a bounded number of times, then give up cleanly. By
// default the last response comes back (with its body, unread); with
// WithGiveUpError a *RetryError says how many attempts and the last status.
func TestGiveUp(t *testing.T) {
	t.Run("response", func(t *testing.T) {
		clock := newAutoClock()
		srv := newStub(t, clock, refuse(100, http.StatusTooManyRequests, func() string { return "1" }))
		tracker := &closeTracker{next: http.DefaultTransport}
		tr, err := client.New(tracker, client.WithClock(clock), client.WithRetries(2))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 429 || string(body) != "slow down" {
			t.Errorf("got %d %q, want the last 429 with its body", resp.StatusCode, body)
		}
		if got := len(srv.arrivals()); got != 3 {
			t.Errorf("%d attempts, want 3", got)
		}
		// The bodies of the two retried responses were drained and closed
		// by the transport, the last by us.
		if opened, closed := tracker.counts(); opened != 3 || closed != 3 {
			t.Errorf("%d bodies opened, %d closed; want 3 and 3", opened, closed)
		}
	})
	t.Run("error", func(t *testing.T) {
		clock := newAutoClock()
		srv := newStub(t, clock, refuse(100, http.StatusServiceUnavailable, func() string { return "2" }))
		tracker := &closeTracker{next: http.DefaultTransport}
		tr, err := client.New(tracker, client.WithClock(clock), client.WithRetries(3), client.WithGiveUpError())
		if err != nil {
			t.Fatal(err)
		}
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
		if resp != nil {
			t.Errorf("got a response %d with the error", resp.StatusCode)
		}
		var re *client.RetryError
		if !errors.As(err, &re) || !errors.Is(err, client.ErrGaveUp) {
			t.Fatalf("error %v, want a *RetryError", err)
		}
		if re.Attempts != 4 || re.LastStatus != 503 || re.RetryAfter != 2*time.Second || re.Reason != "retries exhausted" {
			t.Errorf("RetryError %+v", re)
		}
		if want := "client: gave up after 4 attempts (retries exhausted): last status 503 Service Unavailable"; re.Error() != want {
			t.Errorf("message %q, want %q", re.Error(), want)
		}
		if opened, closed := tracker.counts(); opened != 4 || closed != 4 {
			t.Errorf("%d bodies opened, %d closed; want 4 and 4", opened, closed)
		}
	})
}

// A Retry-After longer than the cap is not waited for: the transport gives
// up at once.
func TestRetryAfterBeyondCap(t *testing.T) {
	for _, ra := range []string{"120", "99999999999999999999999"} {
		clock := newAutoClock()
		srv := newStub(t, clock, refuse(1, http.StatusTooManyRequests, func() string { return ra }))
		hc, _ := newClient(t, clock, client.WithMaxRetryAfter(time.Minute), client.WithGiveUpError(), client.WithProactive(false))
		_, _, err := get(hc, srv.URL)
		var re *client.RetryError
		if !errors.As(err, &re) || re.Attempts != 1 || re.Reason != "Retry-After exceeds the maximum" {
			t.Errorf("Retry-After %s: error %v, want a give-up after 1 attempt", ra, err)
		}
		if got := clock.Sleeps(); len(got) != 0 {
			t.Errorf("Retry-After %s: slept %v", ra, got)
		}
	}
}

// A 429 without Retry-After whose rate-limit fields announce a reset beyond
// WithMaxRetryAfter gives up at once, as one whose Retry-After asks for as
// much does: the cap is on the wait a server asks for "in Retry-After or in
// its RateLimit headers" (DefaultMaxRetryAfter), and retrying at the cap
// would only earn more refusals. An API that answers 429 with
// X-RateLimit-Remaining: 0 and a Unix reset 40 minutes away (GitHub's
// primary limit) or with a day's policy exhausted used to be retried three
// times, a minute apart, before the Transport gave up.
func TestRetryResetBeyondCap(t *testing.T) {
	unix := func(d time.Duration) string { return strconv.FormatInt(t0.Add(d).Unix(), 10) }
	for _, tc := range []struct {
		name     string
		header   http.Header
		attempts int
	}{
		{"RateLimit", http.Header{"Ratelimit": {`"day";r=0;t=36000`}}, 1},
		{"draft-7", http.Header{"Ratelimit": {`limit=5000, remaining=0, reset=36000`}}, 1},
		{"draft-6", http.Header{"Ratelimit-Remaining": {"0"}, "Ratelimit-Reset": {"36000"}}, 1},
		{"legacy Unix", http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {unix(40 * time.Minute)}}, 1},
		{"RateLimit within", http.Header{"Ratelimit": {`"min";r=0;t=30`}}, 2},
		// Retry-After takes precedence over the RateLimit fields.
		{"Retry-After within", http.Header{"Ratelimit": {`"day";r=0;t=36000`}, "Retry-After": {"30"}}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newAutoClock()
			srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					for k, v := range tc.header {
						w.Header()[k] = v
					}
					w.WriteHeader(http.StatusTooManyRequests)
					io.WriteString(w, "slow down")
					return
				}
				io.WriteString(w, "ok")
			})
			_, tr := newClient(t, clock, client.WithGiveUpError())
			req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
			resp, err := tr.RoundTrip(req)
			if resp != nil {
				resp.Body.Close()
			}
			if got := len(srv.arrivals()); got != tc.attempts {
				t.Errorf("%d attempts, want %d", got, tc.attempts)
			}
			if tc.attempts == 2 {
				if err != nil || resp.StatusCode != 200 {
					t.Errorf("got %v, %v; want the retry's 200", resp, err)
				}
				return
			}
			var re *client.RetryError
			if !errors.As(err, &re) || re.Attempts != 1 || re.LastStatus != 429 || re.Reason != "rate-limit reset exceeds the maximum" {
				t.Errorf("error %v, want a give-up after 1 attempt for the reset", err)
			}
			if got := clock.Sleeps(); len(got) != 0 {
				t.Errorf("slept %v, want no wait", got)
			}
		})
	}
}

// A Retry-After in decimal seconds ("1.5"), not RFC 9110's delay-seconds
// but clear in what it asks, is honoured as that wait (rounded up to the
// nanosecond): falling back to the backoff, which may be shorter, would
// send the retry before the server said it would admit it. It is capped as
// any Retry-After is: beyond WithMaxRetryAfter, or beyond the maximum wait,
// the Transport gives up at once; and it holds the key's next requests.
func TestRetryAfterDecimal(t *testing.T) {
	for _, tc := range []struct {
		ra   string
		want time.Duration
	}{
		{"1.5", 1500 * time.Millisecond},
		{"0.25", 250 * time.Millisecond},
		{"2.0000000001", 2*time.Second + time.Nanosecond},
	} {
		// A backoff of at most 1ns: a decimal read as malformed retries
		// at once.
		retriedAfter(t, []string{"Retry-After", tc.ra}, tc.want,
			client.WithRandom(maxSource{}), client.WithBackoff(time.Nanosecond, time.Nanosecond))
	}
	for _, tc := range []struct {
		name   string
		ra     string
		opts   []client.Option
		reason string
	}{
		{"beyond WithMaxRetryAfter", "60.5", nil, "Retry-After exceeds the maximum"},
		{"years", "99999999999999999999.5", nil, "Retry-After exceeds the maximum"},
		{"beyond the maximum wait", "10.5", []client.Option{client.WithMaxWait(10 * time.Second)}, "retry would wait too long"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newAutoClock()
			srv := newStub(t, clock, refuse(1, http.StatusTooManyRequests, func() string { return tc.ra }))
			hc, _ := newClient(t, clock, append([]client.Option{client.WithGiveUpError()}, tc.opts...)...)
			_, _, err := get(hc, srv.URL)
			var re *client.RetryError
			if !errors.As(err, &re) || re.Attempts != 1 || re.Reason != tc.reason {
				t.Fatalf("error %v, want a give-up after 1 attempt: %s", err, tc.reason)
			}
			if s := clock.Sleeps(); len(s) != 0 {
				t.Errorf("slept %v, want no wait", s)
			}
		})
	}
	// The next request waits for the hold the decimal Retry-After set.
	clock := newAutoClock()
	srv := newStub(t, clock, refuse(1, http.StatusTooManyRequests, func() string { return "2.5" }))
	hc, _ := newClient(t, clock, client.WithRetries(0))
	if status, _, err := get(hc, srv.URL); err != nil || status != 429 {
		t.Fatalf("first request: %d %v, want the 429", status, err)
	}
	if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
		t.Fatalf("second request: %d %v, want 200", status, err)
	}
	if at, want := srv.arrivals(), []time.Duration{0, 2500 * time.Millisecond}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v: the second request waits for the hold", at, want)
	}
}

// A malformed Retry-After falls back to the exponential backoff: a unit, a
// sign, an exponent, NaN, members joined by a comma none of which is
// valid, no digit before or after the point.
func TestRetryAfterMalformed(t *testing.T) {
	for _, ra := range []string{"soon", "-5", "1.5s", "-1.5", "1e9", "NaN", "-1, soon", ".5", "1.", "3 s", "Mon, 99 Foo 2026 00:00:00 GMT"} {
		clock := newAutoClock()
		srv := newStub(t, clock, refuse(1, http.StatusTooManyRequests, func() string { return ra }))
		var got []client.Retry
		hc, _ := newClient(t, clock, client.WithRandom(maxSource{}), client.WithBackoff(time.Second, time.Second),
			client.WithOnRetry(func(r client.Retry) { got = append(got, r) }))
		if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
			t.Errorf("Retry-After %q: got %d %v", ra, status, err)
		}
		if len(got) != 1 || got[0].RetryAfter || got[0].Wait != time.Second {
			t.Errorf("Retry-After %q: retries %+v, want one backoff of 1s", ra, got)
		}
	}
}

// Only replayable requests are retried: idempotent methods (or opted-in
// ones, or an Idempotency-Key) with a body that can be had again. Each of
// the methods WithRetryMethods names as retried by default is (and no
// method, which net/http sends as GET); PATCH, not idempotent, is not,
// even with GetBody.
func TestReplayable(t *testing.T) {
	for _, tc := range []struct {
		name     string
		method   string
		body     func() io.Reader
		header   string
		opts     []client.Option
		attempts int
	}{
		{"GET", http.MethodGet, nil, "", nil, 2},
		{"no method (GET)", "", nil, "", nil, 2},
		{"HEAD", http.MethodHead, nil, "", nil, 2},
		{"OPTIONS", http.MethodOptions, nil, "", nil, 2},
		{"TRACE", http.MethodTrace, nil, "", nil, 2},
		{"DELETE", http.MethodDelete, nil, "", nil, 2},
		{"PATCH with GetBody", http.MethodPatch, func() io.Reader { return strings.NewReader("v=1") }, "", nil, 1},
		{"PUT with GetBody", http.MethodPut, func() io.Reader { return strings.NewReader("v=1") }, "", nil, 2},
		{"PUT without GetBody", http.MethodPut, func() io.Reader { return io.MultiReader(strings.NewReader("v=1")) }, "", nil, 1},
		{"POST", http.MethodPost, func() io.Reader { return bytes.NewBufferString("v=1") }, "", nil, 1},
		{"POST without body", http.MethodPost, nil, "", nil, 1},
		{"POST opted in", http.MethodPost, func() io.Reader { return bytes.NewBufferString("v=1") }, "", []client.Option{client.WithRetryMethods("POST")}, 2},
		{"POST with Idempotency-Key", http.MethodPost, func() io.Reader { return strings.NewReader("v=1") }, "Idempotency-Key", nil, 2},
		{"POST with X-Idempotency-Key", http.MethodPost, func() io.Reader { return strings.NewReader("v=1") }, "X-Idempotency-Key", nil, 2},
		{"PATCH opted in without GetBody", http.MethodPatch, func() io.Reader { return io.MultiReader(strings.NewReader("v=1")) }, "", []client.Option{client.WithRetryMethods("PATCH")}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newAutoClock()
			srv := newStub(t, clock, refuse(1, http.StatusTooManyRequests, func() string { return "1" }))
			hc, _ := newClient(t, clock, append([]client.Option{client.WithGiveUpError()}, tc.opts...)...)
			var body io.Reader
			if tc.body != nil {
				body = tc.body()
			}
			req, _ := http.NewRequest(tc.method, srv.URL, body)
			req.Method = tc.method // "" stays "": net/http sends it as GET
			if tc.header != "" {
				req.Header.Set(tc.header, "k-1")
			}
			resp, err := hc.Do(req)
			if tc.attempts == 1 {
				var re *client.RetryError
				if !errors.As(err, &re) || re.Attempts != 1 || re.Reason != "request cannot be replayed" {
					t.Errorf("error %v, want a give-up after 1 attempt", err)
				}
			} else if err != nil || resp.StatusCode != 200 {
				t.Errorf("got %v %v, want 200", resp, err)
			}
			if resp != nil {
				resp.Body.Close()
			}
			got := srv.received()
			if len(got) != tc.attempts {
				t.Fatalf("%d attempts, want %d", len(got), tc.attempts)
			}
			// Every attempt carried the whole body (GetBody replays it).
			for i, b := range got {
				if want := map[bool]string{true: "v=1", false: ""}[tc.body != nil]; b != want {
					t.Errorf("attempt %d body %q, want %q", i+1, b, want)
				}
			}
		})
	}
}

// An idempotency key set through the header map under a name that is not
// in canonical form (Header["idempotency-key"], as code copying headers
// from elsewhere writes it) is still an idempotency key: net/http sends the
// name as written and header names are case-insensitive, so the server
// receives it. Such a POST used to be refused as not replayable.
func TestReplayableIdempotencyKeyAnyCase(t *testing.T) {
	for _, name := range []string{"idempotency-key", "IDEMPOTENCY-KEY", "x-idempotency-key", "X-IDEMPOTENCY-KEY"} {
		t.Run(name, func(t *testing.T) {
			clock := newAutoClock()
			srv := newStub(t, clock, refuse(1, http.StatusTooManyRequests, func() string { return "1" }))
			hc, _ := newClient(t, clock, client.WithGiveUpError())
			req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("v=1"))
			req.Header[name] = []string{"k-1"}
			resp, err := hc.Do(req)
			if err != nil {
				t.Fatalf("got %v, want the retry's 200", err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Errorf("status %d, want 200", resp.StatusCode)
			}
			if got := srv.received(); !slices.Equal(got, []string{"v=1", "v=1"}) {
				t.Errorf("bodies received %q, want the body twice", got)
			}
		})
	}
}

// A GetBody that fails ends the request with its error.
func TestGetBodyError(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, refuse(1, http.StatusTooManyRequests, func() string { return "1" }))
	_, tr := newClient(t, clock)
	req, _ := http.NewRequest(http.MethodPut, srv.URL, strings.NewReader("x"))
	boom := errors.New("boom")
	req.GetBody = func() (io.ReadCloser, error) { return nil, boom }
	if _, err := tr.RoundTrip(req); !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "client: ") {
		t.Fatalf("RoundTrip = %v, want the GetBody error wrapped", err)
	}
}

// Statuses other than 429 and 503 come back as they are, unretried.
func TestOtherStatusesNotRetried(t *testing.T) {
	for _, status := range []int{200, 400, 404, 500, 502, 504} {
		clock := newAutoClock()
		srv := newStub(t, clock, refuse(1, status, func() string { return "1" }))
		hc, _ := newClient(t, clock)
		got, _, err := get(hc, srv.URL)
		if err != nil || got != status {
			t.Errorf("status %d: got %d %v", status, got, err)
		}
		if n := len(srv.arrivals()); n != 1 {
			t.Errorf("status %d: %d attempts", status, n)
		}
	}
}

// A transport error is returned as is, without retry.
func TestTransportError(t *testing.T) {
	clock := newAutoClock()
	boom := errors.New("connection refused")
	tr, err := client.New(roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, boom }), client.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://example.invalid/", nil)
	if _, err := tr.RoundTrip(req); !errors.Is(err, boom) {
		t.Fatalf("RoundTrip = %v", err)
	}
}

// A next RoundTripper that breaks its contract with a nil response and a
// nil error (a test double, say) makes RoundTrip fail with an error naming
// it, as http.Client does, instead of panicking on the nil response.
func TestTransportNilResponse(t *testing.T) {
	tr, err := client.New(roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, nil }), client.WithClock(newAutoClock()))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://example.invalid/", nil)
	var resp *http.Response
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("RoundTrip panicked: %v", p)
			}
		}()
		resp, err = tr.RoundTrip(req)
	}()
	if resp != nil || err == nil || !strings.HasPrefix(err.Error(), "client: ") || !strings.Contains(err.Error(), "nil *Response") {
		t.Fatalf("RoundTrip = %v, %v; want an error for the nil response", resp, err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Retries go through the queue too: the server counts them.
func TestRetriesArePaced(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, refuse(1, http.StatusTooManyRequests, func() string { return "0" }))
	hc, _ := newClient(t, clock, client.WithRate(2, time.Second))
	clock.drive(t, 1, func(int) {
		if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
			t.Errorf("got %d %v", status, err)
		}
	})
	if at, want := srv.arrivals(), []time.Duration{0, 500 * time.Millisecond}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		opt  client.Option
		want string
	}{
		{client.WithRate(0, time.Second), "client: WithRate: limit"},
		{client.WithRate(5, 0), "client: WithRate: per"},
		{client.WithMaxWait(-time.Second), "client: WithMaxWait"},
		{client.WithMaxWait(48 * time.Hour), "client: WithMaxWait"},
		{client.WithKey(nil), "client: WithKey"},
		{client.WithStore(nil), "client: WithStore"},
		{client.WithClock(nil), "client: WithClock"},
		{client.WithRetries(-1), "client: WithRetries"},
		{client.WithBackoff(0, time.Second), "client: WithBackoff: base"},
		{client.WithBackoff(time.Second, time.Millisecond), "client: WithBackoff: ceiling"},
		{client.WithMaxRetryAfter(-1), "client: WithMaxRetryAfter"},
		{client.WithRetryMethods(""), "client: WithRetryMethods"},
		{client.WithRetryMethods("post"), `client: WithRetryMethods: method "post" is not "POST"`},
		{client.WithRetryMethods("Patch"), `client: WithRetryMethods: method "Patch" is not "PATCH"`},
		{client.WithRetryMethods("GET/1"), `client: WithRetryMethods: invalid method "GET/1"`},
		{client.WithRetryMethods("MÉTHODE"), `client: WithRetryMethods: invalid method`},
		{client.WithOnRetry(nil), "client: WithOnRetry"},
		{client.WithRandom(nil), "client: WithRandom"},
		{client.WithStore((*algorithms.MemoryStore)(nil)), "client: WithStore"},
		{client.WithClock((*benchClock)(nil)), "client: WithClock"},
		{client.WithRandom((*rand.PCG)(nil)), "client: WithRandom"},
		{nil, "client: New: option 0 is nil"},
	} {
		_, err := client.New(nil, tc.opt)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("New(%s) = %v, want an error starting %q", tc.want, err, tc.want)
		}
	}
	// Combinations checked at construction.
	if _, err := client.New(nil, client.WithRate(1_000_000_000, time.Millisecond), client.WithMaxWait(time.Hour)); err == nil ||
		!strings.HasPrefix(err.Error(), "client: WithMaxWait: ") {
		t.Errorf("queue too long: %v", err)
	}
	if _, err := client.New(nil, client.WithStore(nopStore{})); err == nil || !strings.Contains(err.Error(), "WithStore") {
		t.Errorf("store without rate: %v", err)
	}
	tr, err := client.New(nil, client.WithRate(5, time.Second), client.WithMaxWait(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	spec, ok := tr.Spec()
	if !ok || spec.Algorithm != "leaky_queue" || spec.Limit != 5 || spec.Window != time.Second || spec.MaxDelay != 2*time.Second {
		t.Errorf("Spec() = %+v, %v", spec, ok)
	}
	if _, ok := mustNew(t).Spec(); ok {
		t.Error("Spec() reports pacing without WithRate")
	}
}

func mustNew(t *testing.T, opts ...client.Option) *client.Transport {
	t.Helper()
	tr, err := client.New(nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// A retry whose wait (Retry-After, or backoff) would end after the
// request's context deadline cannot be sent in time: the Transport gives up
// at once and returns the refusal, instead of sleeping until the deadline
// to return context.DeadlineExceeded and lose the server's answer. The
// deadline is real time (a context's); the waits would be virtual here, so
// nothing sleeps either way.
func TestRetryWaitBeyondDeadline(t *testing.T) {
	for _, tc := range []struct {
		name        string
		ra          string // "" for a backoff of 1 minute
		timeout     time.Duration
		giveUpError bool
		attempts    int
	}{
		{"Retry-After beyond", "30", 10 * time.Second, false, 1},
		{"Retry-After beyond, error", "30", 10 * time.Second, true, 1},
		{"backoff beyond", "", 10 * time.Second, false, 1},
		{"Retry-After within", "30", time.Hour, false, 2},
		{"backoff within", "", time.Hour, false, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newAutoClock()
			var ra func() string
			if tc.ra != "" {
				ra = func() string { return tc.ra }
			}
			srv := newStub(t, clock, refuse(1, http.StatusTooManyRequests, ra))
			opts := []client.Option{client.WithRandom(maxSource{}), client.WithBackoff(time.Minute, time.Minute)}
			if tc.giveUpError {
				opts = append(opts, client.WithGiveUpError())
			}
			_, tr := newClient(t, clock, opts...)
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			resp, err := tr.RoundTrip(req)
			if resp != nil {
				defer resp.Body.Close()
			}
			if got := len(srv.arrivals()); got != tc.attempts {
				t.Fatalf("%d attempts, want %d", got, tc.attempts)
			}
			switch {
			case tc.attempts == 2:
				if err != nil || resp.StatusCode != 200 {
					t.Errorf("got %v, %v; want the retry's 200", resp, err)
				}
			case tc.giveUpError:
				var re *client.RetryError
				if resp != nil || !errors.As(err, &re) || re.Attempts != 1 || re.LastStatus != 429 ||
					re.RetryAfter != 30*time.Second || re.Reason != "retry would come after the context deadline" {
					t.Errorf("got %v, %v; want a *RetryError after 1 attempt for the deadline", resp, err)
				}
			default:
				if err != nil || resp.StatusCode != 429 {
					t.Fatalf("got %v, %v; want the 429 at once", resp, err)
				}
				if b, _ := io.ReadAll(resp.Body); string(b) != "slow down" {
					t.Errorf("body %q, want it unread", b)
				}
				if got := clock.Sleeps(); len(got) != 0 {
					t.Errorf("slept %v", got)
				}
			}
		})
	}
}

// A retry whose wait for the server (its Retry-After, or a RateLimit field's
// hold folded into the backoff) is longer than the maximum wait gives up at
// once, as a request meeting that hold before it is sent fails at once
// (TestHoldBeyondMaxWait): WithMaxWait bounds every wait for a server's hold,
// WithMaxRetryAfter only says which Retry-After is honoured at all. With a
// maximum wait of 10s and WithMaxRetryAfter(1h), a Retry-After: 50 used to
// be slept for 50s before the retry.
func TestRetryHoldBeyondMaxWait(t *testing.T) {
	for _, tc := range []struct {
		name        string
		header      string // set on the first response
		value       string
		proactive   bool
		giveUpError bool
		wait        time.Duration // the held wait beyond the maximum; 0: retried
		ra          time.Duration // RetryError.RetryAfter
	}{
		{"Retry-After", "Retry-After", "50", true, false, 50 * time.Second, 50 * time.Second},
		{"Retry-After, error", "Retry-After", "50", true, true, 50 * time.Second, 50 * time.Second},
		{"Retry-After, not proactive", "Retry-After", "50", false, true, 50 * time.Second, 50 * time.Second},
		{"RateLimit", "RateLimit", `"default";r=0;t=50`, true, true, 50 * time.Second, 0},
		{"Retry-After within", "Retry-After", "10", true, true, 0, 0},
		{"RateLimit within", "RateLimit", `"default";r=0;t=10`, true, true, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newAutoClock()
			srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					w.Header().Set(tc.header, tc.value)
					w.WriteHeader(http.StatusTooManyRequests)
					io.WriteString(w, "slow down")
					return
				}
				io.WriteString(w, "ok")
			})
			opts := []client.Option{client.WithMaxWait(10 * time.Second), client.WithMaxRetryAfter(time.Hour),
				client.WithProactive(tc.proactive), client.WithRandom(zeroSource{})}
			if tc.giveUpError {
				opts = append(opts, client.WithGiveUpError())
			}
			_, tr := newClient(t, clock, opts...)
			req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
			resp, err := tr.RoundTrip(req)
			if resp != nil {
				defer resp.Body.Close()
			}
			switch {
			case tc.wait == 0:
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("got %v, %v; want the retry's 200", resp, err)
				}
				if got := len(srv.arrivals()); got != 2 {
					t.Errorf("%d attempts, want 2", got)
				}
				return
			case tc.giveUpError:
				var re *client.RetryError
				var we *client.WaitError
				if resp != nil || !errors.As(err, &re) {
					t.Fatalf("got %v, %v; want a *RetryError", resp, err)
				}
				if re.Attempts != 1 || re.LastStatus != 429 || re.RetryAfter != tc.ra || re.Reason != "retry would wait too long" {
					t.Errorf("RetryError %+v", re)
				}
				if !errors.As(err, &we) || !we.Held || we.Wait != tc.wait || we.MaxWait != 10*time.Second {
					t.Errorf("error %v, want it to match a held *WaitError of %s", err, tc.wait)
				}
			default:
				if err != nil || resp.StatusCode != 429 {
					t.Fatalf("got %v, %v; want the 429", resp, err)
				}
				if b, _ := io.ReadAll(resp.Body); string(b) != "slow down" {
					t.Errorf("body %q, want the refusal's", b)
				}
			}
			if got := len(srv.arrivals()); got != 1 {
				t.Errorf("%d attempts, want 1", got)
			}
			if got := clock.Sleeps(); len(got) != 0 {
				t.Errorf("slept %v, want no wait", got)
			}
		})
	}
}

// A retry that cannot have its turn within the maximum wait is a give-up
// like the others: the caller gets the last refusal (its body intact) or,
// with WithGiveUpError, a *RetryError giving the attempts made and the
// last status, which also matches the *WaitError that ended the retries.
// At one request every 10s with a maximum wait of 5s, the first request is
// sent at once and refused with Retry-After: 1; its retry's turn would come
// at 10s, 9s away. It used to fail with the bare *WaitError, whose "nothing
// was sent" was untrue and which carried neither status nor attempts.
func TestRetryTurnBeyondMaxWait(t *testing.T) {
	for _, giveUpError := range []bool{false, true} {
		clock := newAutoClock()
		srv := newStub(t, clock, refuse(1, http.StatusTooManyRequests, func() string { return "1" }))
		tracker := &closeTracker{next: http.DefaultTransport}
		opts := []client.Option{client.WithClock(clock), client.WithRate(1, 10*time.Second), client.WithMaxWait(5 * time.Second)}
		if giveUpError {
			opts = append(opts, client.WithGiveUpError())
		}
		tr, err := client.New(tracker, opts...)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
		if giveUpError {
			var re *client.RetryError
			var we *client.WaitError
			if resp != nil || !errors.As(err, &re) || !errors.Is(err, client.ErrGaveUp) {
				t.Fatalf("WithGiveUpError: got %v, %v; want a *RetryError", resp, err)
			}
			if re.Attempts != 1 || re.LastStatus != 429 || re.RetryAfter != time.Second || re.Reason != "retry would wait too long" {
				t.Errorf("RetryError %+v", re)
			}
			if !errors.As(err, &we) || !errors.Is(err, client.ErrWaitTooLong) || we.Wait != 9*time.Second {
				t.Errorf("error %v does not match the *WaitError of the retry", err)
			}
		} else {
			if err != nil || resp.StatusCode != 429 {
				t.Fatalf("got %v, %v; want the 429", resp, err)
			}
			if b, _ := io.ReadAll(resp.Body); string(b) != "slow down" {
				t.Errorf("body %q, want the refusal's", b)
			}
			resp.Body.Close()
		}
		if got := len(srv.arrivals()); got != 1 {
			t.Errorf("giveUpError %v: %d attempts, want 1", giveUpError, got)
		}
		if opened, closed := tracker.counts(); opened != 1 || closed != 1 {
			t.Errorf("giveUpError %v: %d bodies opened, %d closed", giveUpError, opened, closed)
		}
	}
}

// A Retry-After that asks for no wait — "0", a date not after now (the
// server's clock behind ours), retry-after-ms: 0 — is no reason to come
// back at once: a retry sent in the same instant would most likely be
// turned away again, spending the retries in a burst. The backoff applies,
// as for a refusal without Retry-After (urllib3 does the same), and the
// hook's Retry.RetryAfter says the wait is the backoff's.
func TestRetryAfterZeroBacksOff(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header string
		value  func(now time.Time) string
	}{
		{"zero seconds", "Retry-After", func(time.Time) string { return "0" }},
		{"zero decimal", "Retry-After", func(time.Time) string { return "0.0" }},
		{"date now", "Retry-After", func(now time.Time) string { return now.UTC().Format(http.TimeFormat) }},
		{"date past", "Retry-After", func(now time.Time) string { return now.Add(-time.Hour).UTC().Format(http.TimeFormat) }},
		{"zero millis", "Retry-After-Ms", func(time.Time) string { return "0" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newAutoClock()
			srv := newStub(t, clock, func(i int, w http.ResponseWriter, r *http.Request) {
				if i <= 2 {
					w.Header().Set(tc.header, tc.value(clock.Now()))
					w.WriteHeader(http.StatusTooManyRequests)
					return
				}
				io.WriteString(w, "ok")
			})
			var got []client.Retry
			hc, _ := newClient(t, clock, client.WithRandom(maxSource{}), client.WithBackoff(time.Second, 10*time.Second),
				client.WithOnRetry(func(r client.Retry) { got = append(got, r) }))
			if status, body, err := get(hc, srv.URL); err != nil || status != 200 || body != "ok" {
				t.Fatalf("got %d %q %v, want 200 ok", status, body, err)
			}
			if at, want := srv.arrivals(), []time.Duration{0, time.Second, 3 * time.Second}; !slices.Equal(at, want) {
				t.Errorf("arrivals %v, want %v (the backoff's 1s, then 2s)", at, want)
			}
			if len(got) != 2 || got[0].RetryAfter || got[0].Wait != time.Second || got[1].Wait != 2*time.Second {
				t.Errorf("retries %+v, want two backoffs of 1s and 2s", got)
			}
		})
	}
}
