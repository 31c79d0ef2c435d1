package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/client"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
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
		{"X API", []string{"x-rate-limit-limit", "900", "x-rate-limit-remaining", "0", "x-rate-limit-reset", unix}, 9 * time.Second},
		{"OpenAI", []string{"x-ratelimit-limit-requests", "60", "x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "1m0s"}, time.Second},
		{"OpenAI no limit", []string{"x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "20ms"}, 20 * time.Millisecond},
		{"OpenAI fraction without a whole part", []string{"x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", ".5s"}, 500 * time.Millisecond},
		{"OpenAI whole with a bare point", []string{"x-ratelimit-limit-requests", "2", "x-ratelimit-remaining-requests", "0", "x-ratelimit-reset-requests", "1m1.s"}, 30500 * time.Millisecond},
		{"OpenAI tokens", []string{"x-ratelimit-remaining-tokens", "0", "x-ratelimit-reset-tokens", "6m0s"}, 0},
		{"Anthropic", []string{"anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", t0.Add(12 * time.Second).Format(time.RFC3339)}, 12 * time.Second},
		{"Anthropic capped", []string{"anthropic-ratelimit-requests-remaining", "0", "anthropic-ratelimit-requests-reset", "9999-12-31T23:59:59Z"}, time.Minute},
		{"quota left", []string{"RateLimit", `"default";r=1;t=5`}, 0},
		{"malformed", []string{"RateLimit", `"default";r=0;t=five`}, 0},
		{"cached", []string{"Age", "30", "RateLimit", `"default";r=0;t=5`}, 0},
		{"capped", []string{"RateLimit", `"day";r=0;t=86400`}, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) { checkHold(t, tc.want, tc.kv...) })
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
	clock.drive(t, 2, func(i int) {
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
	clock.drive(t, 1, func(int) { get(hc, srv.URL) })
	clock.Advance(time.Second)
	clock.drive(t, 3, func(int) {
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

// Holds only grow: a later response announcing an earlier reset (here a
// RateLimit t of 5s read while the host is held for 30s) leaves the hold as
// it is, and the next request waits the 30s.
func TestShorterHintKeepsHold(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, hint("RateLimit", `"default";r=0;t=30`))
	hc, tr := newClient(t, clock)
	if _, _, err := get(hc, srv.URL); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(srv.URL)
	tr.Observe(client.HostKey(&http.Request{URL: u}), http.Header{"Ratelimit": {`"default";r=0;t=5`}}, clock.Now())
	if _, _, err := get(hc, srv.URL); err != nil {
		t.Fatal(err)
	}
	if got, want := clock.Sleeps(), []time.Duration{30 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("slept %v, want %v", got, want)
	}
	if at, want := srv.arrivals(), []time.Duration{0, 30 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}

// A 429 without Retry-After whose RateLimit field says when quota returns
// is retried then, not after a shorter backoff.
func TestRetryWaitsForRateLimitReset(t *testing.T) {
	retriedAtReset(t, func(h http.Header, _ time.Time) { h.Set("RateLimit", `"default";r=0;t=6`) })
}

// refuseOnce answers the first request 429 with the headers set sets
// (given the clock's time), and every later one "ok".
func refuseOnce(clock *fakeClock, set func(h http.Header, now time.Time)) func(int, http.ResponseWriter, *http.Request) {
	return func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			set(w.Header(), clock.Now())
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.WriteString(w, "ok")
	}
}

// retriedAtReset sends a GET through a client of a 1s backoff to a
// server that refuses it once (refuseOnce with set) with rate-limit
// fields announcing a reset in 6s, and fails t unless it is retried once,
// after those 6s, not after the backoff nor for a Retry-After.
func retriedAtReset(t *testing.T, set func(h http.Header, now time.Time)) {
	t.Helper()
	clock := newAutoClock()
	srv := newStub(t, clock, refuseOnce(clock, set))
	var retries []client.Retry
	hc, _ := newClient(t, clock, client.WithRandom(maxSource{}), client.WithBackoff(time.Second, time.Second),
		client.WithOnRetry(func(r client.Retry) { retries = append(retries, r) }))
	if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
		t.Fatalf("got %d %v, want 200", status, err)
	}
	if at, want := srv.arrivals(), []time.Duration{0, 6 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v (the retry after the fields' 6s reset, not the 1s backoff)", at, want)
	}
	if len(retries) != 1 || retries[0].Wait != 6*time.Second || retries[0].RetryAfter {
		t.Errorf("retries %+v, want one wait of 6s, not from Retry-After", retries)
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
				clock.drive(t, 1, func(int) {
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
			clock.waitSleepers(t, 1, "the request waiting")
			at := clock.Now()
			cancel()
			if err := hangguard.Await(t, done, waitBound, "the cancelled request returned"); !errors.Is(err, context.Canceled) {
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
// receives in its first 2s; the turns of the 5 callers queued 200ms behind
// the first all fall in the hold, so they take new ones, in order, when it
// ends (the refused caller's retry after them): the stub sees nothing
// during its hold and refuses only the first request.
func TestRetryAfterHoldsQueuedCallers(t *testing.T) {
	clock := newFakeClock()
	var mu sync.Mutex
	var refused []time.Duration
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			// Answer once the five other callers have taken their turns
			// (and sleep in the clock), so that the hold meets them queued.
			awaitSleepers(t, clock, 5, "the five other callers waiting for their turns")
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
	clock.drive(t, 6, func(i int) {
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
// fails at once with a held *WaitError giving its whole wait (from when it
// queued to the end of the hold) and is never sent; the refused request
// itself, whose retry would wait as long, gives up at once with its 429
// (see TestRetryHoldBeyondMaxWait).
func TestRetryAfterHoldBeyondMaxWaitForQueuedCallers(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			// Answer once the two other callers have taken their turns
			// (and sleep in the clock), so that the hold meets them queued.
			awaitSleepers(t, clock, 2, "the two other callers waiting for their turns")
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.WriteString(w, "ok")
	})
	hc, _ := newClient(t, clock, client.WithRate(5, time.Second), client.WithMaxWait(time.Second))
	var mu sync.Mutex
	var held, failedAt []time.Duration
	refused := 0
	clock.drive(t, 3, func(i int) {
		status, _, err := get(hc, srv.URL)
		var we *client.WaitError
		switch {
		case err == nil && status == 429:
			mu.Lock()
			refused++
			mu.Unlock()
		case errors.As(err, &we) && we.Held && we.MaxWait == time.Second:
			mu.Lock()
			held = append(held, we.Wait)
			failedAt = append(failedAt, clock.Now().Sub(t0))
			mu.Unlock()
		default:
			t.Errorf("caller %d: got %d %v", i, status, err)
		}
	})
	// Both queued at 0 (turns at 200ms and 400ms); the hold lasts until 5s.
	// Both fail when the first turn meets the hold, at 200ms.
	if want := []time.Duration{5 * time.Second, 5 * time.Second}; !slices.Equal(held, want) {
		t.Errorf("held WaitErrors with waits %v, want %v", held, want)
	}
	if want := []time.Duration{200 * time.Millisecond, 200 * time.Millisecond}; !slices.Equal(failedAt, want) {
		t.Errorf("held WaitErrors returned at %v, want %v", failedAt, want)
	}
	if refused != 1 {
		t.Errorf("%d callers got the 429, want 1 (the refused one)", refused)
	}
	if at, want := srv.arrivals(), []time.Duration{0}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}

// A queueRun runs a caller refused with a Retry-After and callers queued
// behind it in a known order: caller 0 is sent at once; callers 1 to n each
// queue once the one before has taken its turn (and sleeps for it); the
// stub answers caller 0 once all n are queued. With late set, one more
// caller arrives that long after the refusal (a first Sleep on the clock
// puts it in virtual time), to queue during the hold. Every request names
// its caller (0 to n, or "late") in an X-Caller header.
type queueRun struct {
	n    int
	ra   string        // the Retry-After of the refusal
	late time.Duration // 0: no late caller
	// clients returns the client of each caller (by index; the late one
	// is n+1), or one client for all; by default one with opts.
	clients func(clock *fakeClock) []*http.Client
	opts    []client.Option
	// leaveAt, when set, ends the context of caller leaver that long after
	// the refusal is answered.
	leaver  int
	leaveAt time.Duration
}

// run returns the callers in the order the stub received them, with the
// instants, and each caller's error (a non-200 status is one) and the
// instant it came back.
func (q queueRun) run(t *testing.T) (order []string, at []time.Duration, errs []error, ended []time.Duration) {
	t.Helper()
	clock := newFakeClock()
	first, refused := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	srv := newStub(t, clock, func(k int, w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		order = append(order, r.Header.Get("X-Caller"))
		mu.Unlock()
		if k == 1 {
			close(first)
			awaitSleepers(t, clock, q.n, "the queued callers waiting for their turns")
			close(refused)
			w.Header().Set("Retry-After", q.ra)
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.WriteString(w, "ok")
	})
	var hcs []*http.Client
	if q.clients != nil {
		hcs = q.clients(clock)
	} else {
		hc, _ := newClient(t, clock, q.opts...)
		hcs = []*http.Client{hc}
	}
	callers := q.n + 1
	if q.late > 0 {
		callers++
	}
	errs, ended = make([]error, callers), make([]time.Duration, callers)
	workers := callers
	leave, cancel := context.WithCancel(context.Background())
	defer cancel()
	if q.leaveAt > 0 {
		workers++
	}
	clock.drive(t, workers, func(i int) {
		if i == callers {
			if _, ok := hangguard.Within(refused, waitBound); !ok {
				t.Errorf("the leaver: the refusal not answered within %v", waitBound)
				return
			}
			clock.Sleep(context.Background(), q.leaveAt)
			cancel()
			return
		}
		name := strconv.Itoa(i)
		switch {
		case i == q.n+1:
			if _, ok := hangguard.Within(refused, waitBound); !ok {
				t.Errorf("the late caller: the refusal not answered within %v", waitBound)
				return
			}
			clock.Sleep(context.Background(), q.late)
			name = "late"
		case i > 0:
			if _, ok := hangguard.Within(first, waitBound); !ok {
				t.Errorf("caller %d: the first request not at the server within %v", i, waitBound)
				return
			}
			if !awaitSleepers(t, clock, i-1, fmt.Sprintf("caller %d: the %d before it waiting for their turns", i, i-1)) {
				return
			}
		}
		ctx := context.Background()
		if q.leaveAt > 0 && i == q.leaver {
			ctx = leave
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		req.Header.Set("X-Caller", name)
		hc := hcs[0]
		if len(hcs) > 1 {
			hc = hcs[i]
		}
		resp, err := hc.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				err = errors.New(resp.Status)
			}
		}
		errs[i], ended[i] = err, clock.Now().Sub(t0)
	})
	return order, srv.arrivals(), errs, ended
}

// check runs q and reports an order or arrivals other than wanted, and the
// errors of the callers but the leaver, which must return context.Canceled
// when it leaves, and those in failed, which the test checks itself with
// the errors and instants returned.
func (q queueRun) check(t *testing.T, wantOrder []string, wantAt []time.Duration, failed ...int) (errs []error, ended []time.Duration) {
	t.Helper()
	order, at, errs, ended := q.run(t)
	if q.leaveAt > 0 {
		if i := q.leaver; !errors.Is(errs[i], context.Canceled) || ended[i] != q.leaveAt {
			t.Errorf("caller %d: %v at %v, want context.Canceled at %v", i, errs[i], ended[i], q.leaveAt)
		}
		failed = append(failed, q.leaver)
	}
	for i, err := range errs {
		if err != nil && !slices.Contains(failed, i) {
			t.Errorf("caller %d: %v", i, err)
		}
	}
	if !slices.Equal(order, wantOrder) {
		t.Errorf("callers received in the order %v, want %v", order, wantOrder)
	}
	if !slices.Equal(at, wantAt) {
		t.Errorf("arrivals %v, want %v", at, wantAt)
	}
	return errs, ended
}

// Requests to one host leave in the order they arrived across a Retry-After
// hold. At 5 per second, eight callers queue behind a refused one (turns at
// 200ms to 1.6s); its Retry-After holds until 1s, so the turns of the first
// four fall in the hold. They keep their places: they take the turns at 1s
// to 1.6s, and the four behind them, whose turns those were, move back to
// 1.8s to 2.4s. A caller arriving during the hold queues behind all eight.
// (Queued again at the back once the hold had passed, the first four went
// after the four behind them, in any order among the newcomers.)
func TestRetryAfterKeepsQueueOrder(t *testing.T) {
	order, at, errs, _ := queueRun{n: 8, ra: "1", late: 300 * time.Millisecond,
		opts: []client.Option{client.WithRate(5, time.Second), client.WithMaxWait(10 * time.Second)}}.run(t)
	for i, err := range errs {
		if err != nil {
			t.Errorf("caller %d: %v", i, err)
		}
	}
	if len(order) != 11 || len(at) != 11 {
		t.Fatalf("stub received %v at %v, want 11 requests", order, at)
	}
	// The refused caller's retry takes a new turn when the hold ends, as
	// the late caller does: leave it out of the order of the others.
	var got []string
	for _, c := range order[1:] {
		if c != "0" {
			got = append(got, c)
		}
	}
	if want := []string{"1", "2", "3", "4", "5", "6", "7", "8", "late"}; !slices.Equal(got, want) {
		t.Errorf("callers received in the order %v, want %v", got, want)
	}
	// Nothing during the hold, then one every 200ms: no burst when it ends.
	for i := 1; i < len(at); i++ {
		if want := time.Second + time.Duration(i-1)*200*time.Millisecond; at[i] != want {
			t.Errorf("arrivals %v, want 0 then one every 200ms from 1s", at)
			break
		}
	}
	if got, from := maxInWindow(at, time.Second); got > 5 {
		t.Errorf("%d requests arrived within the second from %v: %v", got, from, at)
	}
}

// WithMaxWait bounds the wait of a request that a Retry-After hold meets in
// the queue too, and it is the last to arrive that pay for the hold. At 5
// per second with a maximum wait of 2s, ten callers queue behind a refused
// one (turns at 200ms to 2s); the hold until 1s costs the queue four turns.
// The first six take the turns at 1s to 2s, each within 2s of its arrival;
// the last four would leave after 2s and fail at once, when the first meets
// the hold at 200ms, with a *WaitError and without being sent. (Queued
// again after the hold, the first four left at 2.2s and later, beyond their
// maximum wait, while the six behind them were served.)
func TestRetryAfterHoldMaxWaitFailsTheLast(t *testing.T) {
	order, at, errs, ended := queueRun{n: 10, ra: "1",
		opts: []client.Option{client.WithRate(5, time.Second), client.WithMaxWait(2 * time.Second)}}.run(t)
	for i := 1; i <= 10; i++ {
		var we *client.WaitError
		switch {
		case i <= 6 && errs[i] != nil:
			t.Errorf("caller %d: %v, want it served", i, errs[i])
		case i <= 6 && ended[i] > 2*time.Second:
			t.Errorf("caller %d served at %v, beyond its maximum wait of 2s", i, ended[i])
		case i > 6 && !errors.As(errs[i], &we):
			t.Errorf("caller %d: %v, want a *WaitError", i, errs[i])
		case i > 6 && (we.Wait <= we.MaxWait || we.MaxWait != 2*time.Second || ended[i] != 200*time.Millisecond):
			t.Errorf("caller %d: %+v at %v, want a Wait beyond the 2s maximum, at 200ms", i, we, ended[i])
		}
	}
	if errs[0] != nil {
		t.Errorf("refused caller: %v", errs[0])
	}
	// The refused caller retries at 1s and takes the turn after the six.
	want := []string{"0", "1", "2", "3", "4", "5", "6", "0"}
	if !slices.Equal(order, want) {
		t.Errorf("callers received in the order %v, want %v", order, want)
	}
	wantAt := []time.Duration{0, 1000 * time.Millisecond, 1200 * time.Millisecond, 1400 * time.Millisecond,
		1600 * time.Millisecond, 1800 * time.Millisecond, 2000 * time.Millisecond, 2200 * time.Millisecond}
	if !slices.Equal(at, wantAt) {
		t.Errorf("arrivals %v, want %v", at, wantAt)
	}
}

// A queued caller whose turn a Retry-After took, waiting for the hold to
// pass, returns at once when its context is cancelled; the callers around it
// keep their order.
func TestRetryAfterQueuedCallerCancelled(t *testing.T) {
	queueRun{n: 3, ra: "2", leaver: 2, leaveAt: time.Second,
		opts: []client.Option{client.WithRate(5, time.Second), client.WithMaxWait(10 * time.Second)},
	}.check(t, []string{"0", "1", "3", "0"},
		[]time.Duration{0, 2 * time.Second, 2200 * time.Millisecond, 2400 * time.Millisecond})
}

// Two Transports sharing a store (a fleet) pace together through a
// Retry-After that only one of them received: the requests of that one keep
// their order by exchanging the turns the store gave it, never by moving
// into turns the other holds, so the server still sees one request every
// 200ms at most. Transport X sends callers 0, 1, 2, 5 and 7, Transport Y
// callers 3, 4 and 6, with turns in that order from 0 to 1.4s; X's hold
// until 1s takes the turns of 1 and 2, which take those of 5 and 7 (1s and
// 1.4s), and 5 and 7 take new turns at 1.6s and 1.8s. Y knows of no hold.
func TestSharedStoreRetryAfterKeepsRate(t *testing.T) {
	sharedRetryAfter(t, memFleet(t))
}

func sharedRetryAfter(t *testing.T, fleet fleetOf2) {
	t.Helper()
	queueRun{n: 7, ra: "1",
		clients: func(clock *fakeClock) []*http.Client {
			x, y := fleet(clock, client.WithRate(5, time.Second), client.WithMaxWait(10*time.Second))
			return []*http.Client{x, x, x, y, y, x, y, x}
		},
	}.check(t, []string{"0", "3", "4", "1", "6", "2", "5", "7", "0"},
		[]time.Duration{0, 600 * time.Millisecond, 800 * time.Millisecond, time.Second, 1200 * time.Millisecond,
			1400 * time.Millisecond, 1600 * time.Millisecond, 1800 * time.Millisecond, 2 * time.Second})
}

// Requests that arrive during a hold leave, once it has passed, in the
// order they arrived. The first caller is held off at 0 for 5s, by a
// Retry-After on a 429 or by a RateLimit field announcing no quota left on
// a 200; six more arrive 500ms apart during the hold. They all wake at 5s:
// they take their turns in arrival order, one every 200ms, the refused
// caller's retry, which waited for the hold from its start, first (see
// TestRetryKeepsItsPlaceDuringHold). They used to take them in whatever
// order the scheduler woke them.
func TestArrivalsDuringHoldKeepOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first func(w http.ResponseWriter)
		want  []string
	}{
		{"Retry-After", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(http.StatusTooManyRequests)
		}, []string{"0", "0", "1", "2", "3", "4", "5", "6"}},
		{"RateLimit", func(w http.ResponseWriter) {
			w.Header().Set("RateLimit", `"default";r=0;t=5`)
			io.WriteString(w, "ok")
		}, []string{"0", "1", "2", "3", "4", "5", "6"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			srv, order := orderStub(t, clock, tc.first)
			_, tr := newClient(t, clock, client.WithRate(5, time.Second), client.WithMaxWait(10*time.Second))
			clock.drive(t, 7, func(i int) {
				if i > 0 {
					clock.Sleep(context.Background(), time.Duration(i)*500*time.Millisecond)
				}
				if err := roundTrip(context.Background(), tr, srv.URL, strconv.Itoa(i)); err != nil {
					t.Errorf("caller %d: %v", i, err)
				}
			})
			if !slices.Equal(order(), tc.want) {
				t.Errorf("callers received in the order %v, want %v", order(), tc.want)
			}
			want := []time.Duration{0}
			for i := range len(tc.want) - 1 {
				want = append(want, 5*time.Second+time.Duration(i)*200*time.Millisecond)
			}
			if at := srv.arrivals(); !slices.Equal(at, want) {
				t.Errorf("arrivals %v, want %v", at, want)
			}
		})
	}
}

// A request refused with a Retry-After waits for the hold it brought as the
// requests that arrive during it do, and keeps its place among them: its
// retry goes before them once the hold has passed. At one request a second
// with a maximum wait of 3s, caller 0 is refused at 0 with Retry-After: 2,
// four more arrive 500ms apart, to 2s; the retry is sent at 2s and three of
// them at 3s, 4s and 5s, the last failing (its turn would come 4s after it
// arrived). The retry used to go after all of them, and was the one to
// fail, with the 429, while the callers that came after it were served.
func TestRetryKeepsItsPlaceDuringHold(t *testing.T) {
	clock := newFakeClock()
	srv, order := orderStub(t, clock, refuseFor("2"))
	_, tr := newClient(t, clock, client.WithRate(1, time.Second), client.WithMaxWait(3*time.Second))
	errs := make([]error, 5)
	statuses := make([]int, 5)
	clock.drive(t, 5, func(i int) {
		if i > 0 {
			clock.Sleep(context.Background(), time.Duration(i)*500*time.Millisecond)
		}
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("X-Caller", strconv.Itoa(i))
		resp, err := tr.RoundTrip(req)
		if err == nil {
			statuses[i] = resp.StatusCode
			resp.Body.Close()
		}
		errs[i] = err
	})
	if want := []string{"0", "0", "1", "2", "3"}; !slices.Equal(order(), want) {
		t.Errorf("callers received in the order %v, want %v", order(), want)
	}
	if at, want := srv.arrivals(), []time.Duration{0, 2 * time.Second, 3 * time.Second, 4 * time.Second, 5 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
	for i := range 4 {
		if errs[i] != nil || statuses[i] != 200 {
			t.Errorf("caller %d: %d %v, want 200", i, statuses[i], errs[i])
		}
	}
	var we *client.WaitError
	if !errors.As(errs[4], &we) {
		t.Errorf("caller 4: %d %v, want a *WaitError", statuses[4], errs[4])
	}
}

// A request that leaves while it waits for a hold gives its place at the
// gate on: the first of those that arrived during the hold is cancelled
// before the hold ends, and the others still take their turns, in order,
// from 5s.
func TestArrivalsDuringHoldOneLeaves(t *testing.T) {
	clock := newFakeClock()
	srv, order := orderStub(t, clock, refuseFor("5"))
	_, tr := newClient(t, clock, client.WithRate(5, time.Second), client.WithMaxWait(10*time.Second), client.WithRetries(0))
	leave, cancel := context.WithCancel(context.Background())
	defer cancel()
	var leftAt time.Duration
	var leftErr error
	clock.drive(t, 6, func(i int) {
		if i == 5 {
			clock.Sleep(context.Background(), 2*time.Second)
			cancel()
			return
		}
		ctx := context.Background()
		if i == 1 {
			ctx = leave
		}
		if i > 0 {
			clock.Sleep(context.Background(), time.Duration(i)*500*time.Millisecond)
		}
		err := roundTrip(ctx, tr, srv.URL, strconv.Itoa(i))
		if i == 1 {
			leftAt, leftErr = clock.Now().Sub(t0), err
		} else if err != nil {
			t.Errorf("caller %d: %v", i, err)
		}
	})
	if !errors.Is(leftErr, context.Canceled) || leftAt != 2*time.Second {
		t.Errorf("caller 1 returned %v at %v, want context.Canceled at 2s", leftErr, leftAt)
	}
	if want := []string{"0", "2", "3", "4"}; !slices.Equal(order(), want) {
		t.Errorf("callers received in the order %v, want %v", order(), want)
	}
	if at, want := srv.arrivals(), []time.Duration{0, 5 * time.Second, 5200 * time.Millisecond, 5400 * time.Millisecond}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}

// parkingClock is a fakeClock whose Now, once armed, holds its next caller
// until released: a test can stop a request at a known step.
type parkingClock struct {
	*fakeClock
	armed   atomic.Bool
	parked  chan struct{} // closed when a caller is held
	release chan struct{} // closed to let it go on
}

func (c *parkingClock) Now() time.Time {
	if c.armed.CompareAndSwap(true, false) {
		close(c.parked)
		<-c.release
	}
	return c.fakeClock.Now()
}

// guard runs fn and fails the test if it has not returned within a few
// seconds of real time: a guard against a hang, not a wait.
func guard(t *testing.T, what string, fn func()) {
	t.Helper()
	hangguard.Run(t, 5*time.Second, "hung: "+what+": no return", fn)
}

// A hold set just as a request finds others of its key at the gate (after
// it looked for a hold, before it took its ticket) is waited for on the
// clock. Request A holds the first ticket, awake at the end of a first hold
// but not yet looking again; B meets no hold, finds A at the gate, and a
// second hold begins before B enters. B waited off the clock for A, which
// slept on the second hold: time stood still and both waited for ever
// (TestStressQueueRetries hung about once in a few hundred seeds).
func TestGateEntryAsHoldBegins(t *testing.T) {
	fc := newFakeClock()
	clock := &parkingClock{fakeClock: fc, parked: make(chan struct{}), release: make(chan struct{})}
	// The server is a RoundTripper under the Transport: it records the
	// instant each request leaves it.
	var mu sync.Mutex
	var order []string
	var at []time.Duration
	arrived := make(chan struct{}, 2)
	server := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		order = append(order, r.Header.Get("X-Caller"))
		at = append(at, fc.Now().Sub(t0))
		mu.Unlock()
		arrived <- struct{}{}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	tr, err := client.New(server, client.WithClock(clock), client.WithRate(5, time.Second), client.WithMaxWait(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	const url, key = "http://api.example", "api.example"
	hold := func() { tr.Observe(key, http.Header{"Retry-After": {"1"}}, fc.Now()) }

	hold() // until 1s
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Go(func() { errs[0] = roundTrip(context.Background(), tr, url, "A") })
	fc.waitSleepers(t, 1, "A waits for the first hold")
	clock.armed.Store(true)
	fc.Advance(time.Second)
	guard(t, "A wakes", func() { <-clock.parked })

	var holds atomic.Int32
	defer client.BeforeGateEnter(func() {
		holds.Add(1)
		hold() // until 2s
	})()
	wg.Go(func() { errs[1] = roundTrip(context.Background(), tr, url, "B") })
	fc.waitSleepers(t, 1, "B waits for the second hold on the clock")
	close(clock.release)
	fc.waitSleepers(t, 2, "A waits for the second hold")
	fc.Advance(time.Second)
	// One request is sent at 2s, without sleeping, and the other sleeps
	// until its turn at 2.2s: the clock moves on only once the first has
	// reached the server (its goroutine may run after the other sleeps).
	fc.waitSleepers(t, 1, "B waits for its turn")
	guard(t, "the first request is sent at its turn", func() { <-arrived })
	fc.Advance(200 * time.Millisecond)
	guard(t, "both requests return", wg.Wait)

	if holds.Load() != 1 {
		t.Fatalf("B entered the gate %d times after meeting no hold, want 1", holds.Load())
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("request %d: %v", i, err)
		}
	}
	if want := []string{"A", "B"}; !slices.Equal(order, want) {
		t.Errorf("received %v, want %v", order, want)
	}
	if at, want := at, []time.Duration{2 * time.Second, 2200 * time.Millisecond}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}

// Requests that waited at the gate for a hold take their turns in their
// order of arrival, even when the one ahead of them leaves the queue as
// they join it. A, B and C wait in that order for a RateLimit hold; as it
// ends, A and then B took their turns from the store without the line (no
// request was in it), and gave up their tickets before they were in it.
// C, behind them, joined the line; A, cancelled, left it, and its turn
// went to the request behind it in the line: C, not B, which was still on
// its way there, so C was sent before B (TestStressQueueDeadlines failed
// so, rarely, under load).
func TestGateOrderAsTheOneAheadLeaves(t *testing.T) {
	defer client.CheckLines(func(why string) { t.Errorf("a line broke: %s", why) })()
	fc := newFakeClock()
	sent := make(chan string, 3)
	server := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent <- r.Header.Get("X-Caller")
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	mem, err := algorithms.NewMemoryStore(algorithms.WithClock(fc))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := client.New(server, client.WithClock(fc), client.WithRate(1, time.Second),
		client.WithMaxWait(10*time.Second), client.WithStore(mem))
	if err != nil {
		t.Fatal(err)
	}
	const url, key = "http://api.example", "api.example"
	// Another instance sharing the store took the turns at 0 and 1s: the
	// next are at 2s (A), 3s (B) and 4s (C).
	spec, _ := tr.Spec()
	other, err := algorithms.NewLimiter(mem, spec)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if d, err := other.Allow(context.Background(), key); err != nil || !d.Allowed {
			t.Fatalf("the other instance's turn: %+v, %v", d, err)
		}
	}
	// No quota left until 1s: a hold on the requests that arrive, not on
	// a queue.
	tr.Observe(key, http.Header{"Ratelimit": {`"p";r=0;t=1`}}, fc.Now())

	ctxA, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	var wg sync.WaitGroup
	doneA := make(chan struct{})
	errs := make([]error, 3)
	wg.Go(func() { defer close(doneA); errs[0] = roundTrip(ctxA, tr, url, "A") })
	fc.waitSleepers(t, 1, "A waits for the hold")
	wg.Go(func() { errs[1] = roundTrip(context.Background(), tr, url, "B") })
	fc.waitSleepers(t, 2, "B waits for the hold")
	wg.Go(func() { errs[2] = roundTrip(context.Background(), tr, url, "C") })
	fc.waitSleepers(t, 3, "C waits for the hold")

	// Where a request takes its turn without its line, A waits until B has
	// taken its turn too; then, while B is on its way to the line, C joins
	// it and A, cancelled, leaves it.
	var calls atomic.Int32
	releaseA := make(chan struct{})
	wait := func(what string, ch <-chan struct{}) {
		if _, ok := hangguard.Within(ch, 5*time.Second); !ok {
			t.Errorf("hung: %s", what)
		}
	}
	defer client.AfterTurnTaken(func() {
		switch calls.Add(1) {
		case 1: // A
			wait("A released", releaseA)
		case 2: // B
			awaitSleepers(t, fc, 1, "C waits in the line")
			cancelA()
			close(releaseA)
			wait("A leaves", doneA)
		}
	})()
	fc.Advance(time.Second)
	fc.waitSleepers(t, 2, "B and C wait for their turns")
	cancelA()
	guard(t, "A leaves", func() { <-doneA })
	fc.waitSleepers(t, 2, "B and C wait for their turns")
	fc.Advance(time.Second)
	var order []string
	guard(t, "the first is sent at 2s", func() { order = append(order, <-sent) })
	fc.waitSleepers(t, 1, "the second waits for its turn")
	fc.Advance(2 * time.Second)
	guard(t, "the second is sent", func() { order = append(order, <-sent) })
	guard(t, "B and C return", wg.Wait)

	if !errors.Is(errs[0], context.Canceled) {
		t.Errorf("A: %v, want context.Canceled", errs[0])
	}
	for i, err := range errs[1:] {
		if err != nil {
			t.Errorf("request %d: %v", i+1, err)
		}
	}
	if want := []string{"B", "C"}; !slices.Equal(order, want) {
		t.Errorf("sent %v, want %v", order, want)
	}
}

// orderStub is a stub that records the X-Caller header of each request it
// receives, in order (order returns them), and answers the first with
// first, the others with 200.
func orderStub(t *testing.T, clock *fakeClock, first func(w http.ResponseWriter)) (srv *stub, order func() []string) {
	t.Helper()
	var mu sync.Mutex
	var callers []string
	srv = newStub(t, clock, func(k int, w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		callers = append(callers, r.Header.Get("X-Caller"))
		mu.Unlock()
		if k == 1 {
			first(w)
			return
		}
		io.WriteString(w, "ok")
	})
	return srv, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(callers)
	}
}

// refuseFor answers 429 with Retry-After: seconds.
func refuseFor(seconds string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Retry-After", seconds)
		w.WriteHeader(http.StatusTooManyRequests)
	}
}

// checkHold sends two GETs through a Transport to a server answering 200
// with the header lines kv (name, value, ...) and checks the second left
// want after the first: the hold those headers asked for.
func checkHold(t *testing.T, want time.Duration, kv ...string) {
	t.Helper()
	clock := newAutoClock()
	srv := newStub(t, clock, hint(kv...))
	hc, _ := newClient(t, clock, client.WithMaxWait(time.Hour))
	for range 2 {
		if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
			t.Fatalf("got %d %v", status, err)
		}
	}
	if at, want := srv.arrivals(), []time.Duration{0, want}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
}

// A hold with 1ns left still holds the request for that 1ns: it reaches the
// server when the hold ends, not before.
func TestHoldLastNanosecond(t *testing.T) {
	clock := newAutoClock()
	srv := newStub(t, clock, hint("RateLimit", `"default";r=0;t=5`))
	hc, _ := newClient(t, clock)
	if _, _, err := get(hc, srv.URL); err != nil {
		t.Fatal(err)
	}
	clock.Advance(5*time.Second - time.Nanosecond)
	if _, _, err := get(hc, srv.URL); err != nil {
		t.Fatal(err)
	}
	if at, want := srv.arrivals(), []time.Duration{0, 5 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v: the last nanosecond of the hold was not waited", at, want)
	}
	if got := clock.Sleeps(); !slices.Equal(got, []time.Duration{time.Nanosecond}) {
		t.Errorf("slept %v, want [1ns]", got)
	}
}
