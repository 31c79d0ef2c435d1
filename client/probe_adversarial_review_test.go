package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// An adversarial review of the probes of a cut hold (probe.go), with the
// fake clock and real httptest servers, as probe_review_test.go.

// With pacing, the requests queued behind a slow probe (its server takes a
// second to answer, ten turns at 10/s) had their turns while it was out;
// once it is admitted they must not all leave at the instant of its answer,
// a burst of four at a rate of one per 100ms: they take new turns, as the
// requests whose turns a hold took do.
func TestSlowProbeAnswerDoesNotBurstPacedWaiters(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 1:
			refuseForTheHour(w, clock.Now(), "Retry-After")
		case 2:
			// The probe, at 61s: the four others are asleep for their
			// turns (61.1s to 61.4s); the server takes a second, during
			// which they wait for its answer.
			// Time moves only once their sleeps are set: one woken by
			// a step sets its next before the step after.
			for range 10 {
				if !awaitSleepers(t, clock, 4, "the others asleep for their turns or the probe's answer") {
					return
				}
				clock.Advance(100 * time.Millisecond)
			}
			awaitSleepers(t, clock, 4, "the others waiting for the probe's answer")
			io.WriteString(w, "ok")
		default:
			io.WriteString(w, "ok")
		}
	})
	_, tr := newClient(t, clock, client.WithRate(10, time.Second))
	refusedThenCut(t, clock, tr, srv.URL)
	results := make([]result, 5)
	clock.drive(t, 5, func(i int) {
		results[i] = call(context.Background(), tr, srv.URL, strconv.Itoa(i))
	})
	want := []time.Duration{0, 61 * time.Second, 62 * time.Second, 62100 * time.Millisecond, 62200 * time.Millisecond, 62300 * time.Millisecond}
	if at := srv.arrivals(); !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v: the waiters left together at the probe's answer", at, want)
	}
	if got, want := tally(results), map[string]int{"200": 5}; !maps.Equal(got, want) {
		t.Errorf("results %v, want %v", got, want)
	}
}

// A probe whose next RoundTripper panics ends without an answer: the
// panic reaches its caller, and the request waiting for the probe becomes
// the probe at once, instead of waiting its minute for an answer that
// never comes.
func TestProbePanicHandsOn(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			refuseForTheHour(w, clock.Now(), "Retry-After")
			return
		}
		io.WriteString(w, "ok")
	})
	inner := &http.Transport{}
	t.Cleanup(inner.CloseIdleConnections)
	var calls atomic.Int64
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if calls.Add(1) == 2 {
			// The probe: the other waits for its answer.
			awaitSleepers(t, clock, 1, "the other caller waiting for the probe")
			panic("next RoundTripper broke")
		}
		return inner.RoundTrip(r)
	})
	tr, err := client.New(next, client.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	refusedThenCut(t, clock, tr, srv.URL)
	results := make([]result, 2)
	var panics atomic.Int64
	clock.drive(t, 2, func(i int) {
		defer func() {
			if recover() != nil {
				panics.Add(1)
			}
		}()
		results[i] = call(context.Background(), tr, srv.URL, strconv.Itoa(i))
	})
	if got := panics.Load(); got != 1 {
		t.Errorf("%d callers saw the panic, want 1", got)
	}
	if at, want := srv.arrivals(), []time.Duration{0, 61 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v: the probe's role was not handed on at once", at, want)
	}
	if got, want := tally(results), map[string]int{"200": 1}; got["200"] != want["200"] {
		t.Errorf("results %v, want one 200", got)
	}
}

// A request that looks for the key's hold just before the probe's answer
// renews it, and takes its role just after, must not go as a second probe
// at the instant the first was refused again for the hour: it waits for the
// renewed hold (here, with a maximum wait of 30s, it cannot, and fails
// unsent). The hook holds the request between the two steps while the
// probe's answer comes.
func TestRequestBetweenHoldCheckAndRoleSeesRenewedHold(t *testing.T) {
	clock := newFakeClock()
	probeIn := make(chan struct{})
	paused := make(chan struct{})
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 2 {
			// The probe answers once the other request has looked for
			// the hold, and is about to take its role.
			close(probeIn)
			if _, ok := hangguard.Within(paused, 5*time.Second); !ok {
				t.Error("the other request did not come")
			}
		}
		refuseForTheHour(w, clock.Now(), "Retry-After")
	})
	_, tr := newClient(t, clock, client.WithMaxWait(30*time.Second))
	refusedThenCut(t, clock, tr, srv.URL)

	var entered atomic.Int64
	release := make(chan struct{})
	defer client.BeforeProbeEnter(func() {
		if entered.Add(1) == 2 { // the second request
			close(paused)
			if _, ok := hangguard.Within(release, waitBound); !ok {
				t.Error("the other request was not released")
			}
		}
	})()
	probeDone := make(chan result, 1)
	go func() { probeDone <- call(context.Background(), tr, srv.URL, "probe") }()
	hangguard.Await(t, probeIn, 5*time.Second, "the probe at the server")
	otherDone := make(chan result, 1)
	go func() { otherDone <- call(context.Background(), tr, srv.URL, "other") }()
	hangguard.Await(t, paused, 5*time.Second, "the other request about to take its role")
	probe := hangguard.Await(t, probeDone, 5*time.Second, "the probe's answer")
	close(release)
	other := hangguard.Await(t, otherDone, 5*time.Second, "the other request")
	if probe.err != nil || probe.status != http.StatusTooManyRequests {
		t.Errorf("probe: got %d %v, want the 429", probe.status, probe.err)
	}
	var we *client.WaitError
	if !errors.As(other.err, &we) || !we.Held {
		t.Errorf("other: got %d %v, want a held *WaitError", other.status, other.err)
	}
	if at, want := srv.arrivals(), []time.Duration{0, 61 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v: a second probe went as the first was refused again", at, want)
	}
}

// probeStress sends callers×rounds requests over keys keys through one
// Transport, in virtual time, to a server that refuses some for the hour
// (renewing the cut), some for 5s, some bare, and admits the rest; the
// next RoundTripper fails some requests, panics on others, and some
// callers' contexts end at the server or while they wait. Every caller
// returns, and then no key has a probe out or a request waiting for one
// (a probe left out would hold its key's requests until the server's
// hour has passed).
func probeStress(t *testing.T, seed uint64, opts ...client.Option) {
	const callers, rounds, keys = 40, 15, 5
	clock := newFakeClock()
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, 1))
	draw := func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return rng.Float64()
	}
	cancels := sync.Map{} // caller -> context.CancelFunc
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		switch p := draw(); {
		case p < 0.05:
			if c, ok := cancels.Load(r.Header.Get("X-Caller")); ok {
				c.(context.CancelFunc)()
				if _, ok := hangguard.Within(r.Context().Done(), waitBound); !ok {
					t.Errorf("seed %d: the server did not see the request of caller %s end", seed, r.Header.Get("X-Caller"))
				}
				return
			}
			io.WriteString(w, "ok")
		case p < 0.35:
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusTooManyRequests)
		case p < 0.45:
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(http.StatusTooManyRequests)
		case p < 0.55:
			w.WriteHeader(http.StatusServiceUnavailable)
		case p < 0.65:
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(clock.Now().Add(2*time.Hour).Unix(), 10))
			io.WriteString(w, "ok")
		default:
			io.WriteString(w, "ok")
		}
	})
	inner := &http.Transport{MaxIdleConnsPerHost: callers}
	t.Cleanup(inner.CloseIdleConnections)
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		switch p := draw(); {
		case p < 0.03:
			panic("next RoundTripper broke")
		case p < 0.06:
			return nil, errors.New("connection reset by peer")
		}
		return inner.RoundTrip(r)
	})
	tr, err := client.New(next, append([]client.Option{client.WithClock(clock),
		client.WithKey(func(r *http.Request) string { return r.Header.Get("X-Key") })}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- clock.run(callers, func(i int) {
			caller := strconv.Itoa(i)
			for range rounds {
				ctx, cancel := context.WithCancel(context.Background())
				cancels.Store(caller, context.CancelFunc(cancel))
				if draw() < 0.05 {
					// Its context ends while it waits, at the latest.
					go func() { cancel() }()
				}
				func() {
					defer func() { _ = recover() }()
					r, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
					r.Header.Set("X-Caller", caller)
					r.Header.Set("X-Key", strconv.Itoa(int(draw()*keys)))
					if resp, err := tr.RoundTrip(r); err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				}()
				cancel()
			}
		})
	}()
	if err, ok := hangguard.Within(done, 60*time.Second); !ok {
		t.Fatalf("seed %d: the callers did not all return (stranded)", seed)
	} else if err != nil {
		t.Fatalf("seed %d: the callers did not all return (stranded): %v", seed, err)
	}
	if keys := tr.ProbesOut(); len(keys) != 0 {
		t.Errorf("seed %d: keys %v have a probe out, or requests waiting for one, with every caller returned", seed, keys)
	}
}

func TestProbeStress(t *testing.T) {
	for seed := range uint64(4) {
		probeStress(t, seed)
		probeStress(t, seed, client.WithRate(20, time.Second))
		probeStress(t, seed, client.WithMaxRetryAfter(time.Second))
		probeStress(t, seed, client.WithMaxRetryAfter(0))
	}
}

// A probe refused without a word on how long (a 503 or 429 with neither
// Retry-After nor rate-limit fields) learns nothing that lifts the wait the
// server announced: the requests waiting for it must not all go at once
// into more refusals. The probe keeps its role through its retry, and the
// others go once that retry is admitted (before, they all went at the
// probe's refusal, and were refused too).
func TestProbeRefusedWithoutAWaitKeepsItsRole(t *testing.T) {
	for _, status := range []int{http.StatusServiceUnavailable, http.StatusTooManyRequests} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			probeKeepsItsRole(t, status, func(w http.ResponseWriter, _ time.Time) { w.WriteHeader(status) })
		})
	}
}

// probeKeepsItsRole runs the first request of a key into a refusal for the
// hour, cut (refusedThenCut), then five callers after the cut: the first
// is the probe, which refuse answers (at the instant the others wait for
// it), and the server refuses with status again at 61 s, then admits. It
// checks that the probe's retry comes next, alone, and that the others go
// once it is admitted: 7 requests in all, 5 successes.
func probeKeepsItsRole(t *testing.T, status int, refuse func(w http.ResponseWriter, now time.Time)) {
	t.Helper()
	clock := newFakeClock()
	var mu sync.Mutex
	var order []string
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		order = append(order, r.Header.Get("X-Caller"))
		mu.Unlock()
		switch n {
		case 1:
			refuseForTheHour(w, clock.Now(), "Retry-After")
		case 2:
			awaitSleepers(t, clock, 4, "the others waiting for the probe")
			refuse(w, clock.Now())
		default:
			// Still refusing at 61s; admitting once the probe's
			// backoff has passed.
			if clock.Now().Sub(t0) == 61*time.Second {
				w.WriteHeader(status)
				return
			}
			io.WriteString(w, "ok")
		}
	})
	_, tr := newClient(t, clock, client.WithBackoff(time.Second, time.Second), client.WithRandom(rand.NewPCG(1, 2)))
	refusedThenCut(t, clock, tr, srv.URL)
	results := make([]result, 5)
	clock.drive(t, 5, func(i int) {
		results[i] = call(context.Background(), tr, srv.URL, strconv.Itoa(i))
	})
	mu.Lock()
	defer mu.Unlock()
	if len(order) < 3 || order[2] != order[1] {
		t.Errorf("callers in arrival order %v: the refused probe's retry must come next, alone", order)
	}
	if len(order) != 7 {
		t.Errorf("%d requests reached the server (%v), want 7: first, the probe twice, four others once", len(order), order)
	}
	if got, want := tally(results), map[string]int{"200": 5}; !maps.Equal(got, want) {
		t.Errorf("results %v, want %v", got, want)
	}
}

// A cut renewed again and again: 60 callers that may wait two hours, at
// 61s, behind a server that refuses each probe for the rest of its hour.
// One probe a minute goes out (each refused for longer than the maximum,
// it gives up), until a refusal asks for less than the maximum: the cut is
// lifted, and the last probe's retry and the last caller go at the end of
// the hour, admitted. Nobody is stranded past it.
func TestCutRenewedUntilTheServersEnd(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if clock.Now().Before(hourEnd) {
			refuseForTheHour(w, clock.Now(), "Retry-After")
			return
		}
		io.WriteString(w, "ok")
	})
	_, tr := newClient(t, clock, client.WithMaxWait(2*time.Hour))
	refusedThenCut(t, clock, tr, srv.URL)
	const callers = 60
	results := make([]result, callers)
	clock.drive(t, callers, func(i int) {
		results[i] = call(context.Background(), tr, srv.URL, strconv.Itoa(i))
	})
	want := []time.Duration{0}
	for at := 61 * time.Second; at < time.Hour; at += time.Minute {
		want = append(want, at)
	}
	want = append(want, time.Hour, time.Hour)
	if at := srv.arrivals(); !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
	if got, want := tally(results), map[string]int{"429": 58, "200": 2}; !maps.Equal(got, want) {
		t.Errorf("results %v, want %v", got, want)
	}
	if keys := tr.ProbesOut(); len(keys) != 0 {
		t.Errorf("keys %v have a probe out", keys)
	}
}

// Many keys cut at once, round after round, each cut over before the next
// round and none of its keys asked for again: the sweep in cuts.extend
// keeps the record as small as the set of keys cut (at most twice it), and
// the count the fast path reads agrees with it.
func TestManyCutsAreSwept(t *testing.T) {
	tr, err := client.New(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	const perRound = 1000
	now := t0
	for round := range 10 {
		for k := range perRound {
			tr.Observe(fmt.Sprintf("r%d-k%d", round, k), http.Header{"Retry-After": {"120"}}, now)
		}
		keys, n := tr.Cuts()
		if int64(keys) != n {
			t.Fatalf("round %d: %d keys recorded, the fast path counts %d", round, keys, n)
		}
		if keys > 2*perRound+64 {
			t.Fatalf("round %d: %d keys recorded as cut, for %d cut now", round, keys, perRound)
		}
		now = now.Add(121 * time.Second)
	}
	tr.Observe("last", http.Header{"Retry-After": {"120"}}, now)
	if keys, n := tr.Cuts(); keys > 2*perRound+64 || int64(keys) != n {
		t.Errorf("after the last cut: %d keys recorded, %d counted", keys, n)
	}
}

// A probe refused without a wait that does not retry — it cannot be
// replayed (a POST), its context ends before the retry, or the OnRetry
// hook panics — hands its role on as it returns: the request waiting for
// it goes at once as the next probe, instead of waiting its minute.
func TestProbeRefusedWithoutAWaitGivingUpHandsOn(t *testing.T) {
	for _, how := range []string{"POST", "context ends", "OnRetry panics"} {
		t.Run(how, func(t *testing.T) {
			clock := newFakeClock()
			probeIn := make(chan struct{})
			srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				switch n {
				case 1:
					refuseForTheHour(w, clock.Now(), "Retry-After")
				case 2:
					close(probeIn)
					awaitSleepers(t, clock, 1, "the other waiting for the probe")
					w.WriteHeader(http.StatusServiceUnavailable)
				default:
					io.WriteString(w, "ok")
				}
			})
			probeCtx, cancel := context.WithCancel(context.Background())
			defer cancel()
			opts := []client.Option{client.WithBackoff(time.Second, time.Second)}
			switch how {
			case "context ends":
				opts = append(opts, client.WithOnRetry(func(client.Retry) { cancel() }))
			case "OnRetry panics":
				opts = append(opts, client.WithOnRetry(func(client.Retry) { panic("hook broke") }))
			}
			_, tr := newClient(t, clock, opts...)
			refusedThenCut(t, clock, tr, srv.URL)
			var probe, other result
			clock.drive(t, 2, func(i int) {
				if i == 0 {
					defer func() { _ = recover() }()
					method := http.MethodGet
					if how == "POST" {
						method = http.MethodPost
					}
					r, _ := http.NewRequestWithContext(probeCtx, method, srv.URL, nil)
					resp, err := tr.RoundTrip(r)
					if err == nil {
						resp.Body.Close()
						probe.status = resp.StatusCode
					}
					probe.err = err
					return
				}
				// The other comes once the probe is out.
				if _, ok := hangguard.Within(probeIn, 5*time.Second); !ok {
					t.Error("the probe did not reach the server")
				}
				other = call(context.Background(), tr, srv.URL, "other")
			})
			if other.err != nil || other.status != http.StatusOK {
				t.Errorf("other: got %d %v, want 200", other.status, other.err)
			}
			if at, want := srv.arrivals(), []time.Duration{0, 61 * time.Second, 61 * time.Second}; !slices.Equal(at, want) {
				t.Errorf("arrivals %v, want %v: the role was not handed on at once", at, want)
			}
		})
	}
}

// shiftClock is the system clock, moved forward by shift, that tells, on
// sleeping, that it sleeps.
type shiftClock struct {
	shift    atomic.Int64
	sleeping chan struct{}
}

func (c *shiftClock) Now() time.Time {
	return client.SystemClock.Now().Add(time.Duration(c.shift.Load()))
}

func (c *shiftClock) Sleep(ctx context.Context, d time.Duration) error {
	c.sleeping <- struct{}{}
	return client.SystemClock.Sleep(ctx, d)
}

// With the system clock, callers waiting for a probe's answer (the probe
// stuck at its next RoundTripper) all return at once when their contexts
// are cancelled, the probe too, and the Transport leaves no goroutine
// behind: the waits are on the callers' goroutines, and each one's
// context.WithCancel is cancelled. (The clock jumps past the cut hold, so
// that nothing waits for it in real time.)
func TestCancelledProbeWaitsLeaveNoGoroutine(t *testing.T) {
	probeIn := make(chan struct{})
	var calls atomic.Int64
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if calls.Add(1) == 1 {
			return &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"3600"}}, Body: http.NoBody, Request: r}, nil
		}
		close(probeIn)
		<-r.Context().Done()
		return nil, r.Context().Err()
	})
	clock := &shiftClock{sleeping: make(chan struct{}, 100)}
	tr, err := client.New(next, client.WithClock(clock), client.WithMaxRetryAfter(time.Second), client.WithMaxWait(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(context.Background(), tr, "http://refuse.example/", ""); err != nil {
		t.Fatal(err)
	}
	clock.shift.Store(int64(2 * time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const n = 20
	var wg sync.WaitGroup
	var cancelled atomic.Int64
	for range n {
		wg.Go(func() {
			if err := roundTrip(ctx, tr, "http://refuse.example/", ""); errors.Is(err, context.Canceled) {
				cancelled.Add(1)
			}
		})
	}
	hangguard.Await(t, probeIn, 10*time.Second, "the probe did not go")
	for range n - 1 {
		hangguard.Await(t, clock.sleeping, 10*time.Second, "callers did not all wait for the probe's answer")
	}
	cancel()
	hangguard.Run(t, 10*time.Second, "the callers did not return", wg.Wait)
	if got := cancelled.Load(); got != n {
		t.Errorf("%d callers saw context.Canceled, want %d", got, n)
	}
	if keys := tr.ProbesOut(); len(keys) != 0 {
		t.Errorf("keys %v have a probe out", keys)
	}
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	for _, g := range strings.Split(stacks, "\n\n") {
		if strings.Contains(g, "ratekeeper/client.") && !strings.Contains(g, "client_test.TestCancelledProbeWaitsLeaveNoGoroutine(") {
			t.Errorf("a goroutine is left in the Transport:\n%s", g)
		}
	}
}

// The role of a probe that ends without an answer is handed on, but not
// into a hold set meanwhile: here a request sent before the cut (Q, slow
// at the server) is refused for the hour again while the probe is out,
// renewing the hold to 121s; then the probe fails at its transport. The
// request waiting for the probe takes its role, waits for that hold, and
// goes as the probe at 121s, not into the refusal at 61s; when it cannot
// wait that long (a maximum wait of 30s), it fails unsent and hands the
// role on (no probe is left out).
func TestHandedProbeWaitsForAHoldSetMeanwhile(t *testing.T) {
	for _, tc := range []struct {
		maxWait  time.Duration
		arrivals []time.Duration
		results  map[string]int
	}{
		{time.Minute, []time.Duration{0, 0, 121 * time.Second}, map[string]int{"200": 1, "connection reset by peer": 1}},
		{30 * time.Second, []time.Duration{0, 0}, map[string]int{"WaitError": 1, "connection reset by peer": 1}},
	} {
		t.Run(tc.maxWait.String(), func(t *testing.T) {
			clock := newFakeClock()
			qIn, qRelease := make(chan struct{}), make(chan struct{})
			srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				switch r.Header.Get("X-Caller") {
				case "Q":
					close(qIn)
					if _, ok := hangguard.Within(qRelease, 5*time.Second); !ok {
						t.Error("Q was not released")
					}
					refuseForTheHour(w, clock.Now(), "Retry-After")
				case "first":
					refuseForTheHour(w, clock.Now(), "Retry-After")
				default:
					io.WriteString(w, "ok")
				}
			})
			inner := &http.Transport{}
			t.Cleanup(inner.CloseIdleConnections)
			var probes atomic.Int64
			qDone := make(chan result, 1)
			next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				if c := r.Header.Get("X-Caller"); c == "Q" || c == "first" || probes.Add(1) > 1 {
					return inner.RoundTrip(r)
				}
				// The probe: with the other waiting for it, Q is answered
				// (the hold renewed); then the probe fails.
				awaitSleepers(t, clock, 1, "the other waiting for the probe")
				close(qRelease)
				q := hangguard.Await(t, qDone, 5*time.Second, "Q's answer")
				if q.err != nil || q.status != http.StatusTooManyRequests {
					t.Errorf("Q: got %d %v, want the 429", q.status, q.err)
				}
				return nil, errors.New("connection reset by peer")
			})
			tr, err := client.New(next, client.WithClock(clock), client.WithMaxWait(tc.maxWait))
			if err != nil {
				t.Fatal(err)
			}
			go func() { qDone <- call(context.Background(), tr, srv.URL, "Q") }()
			hangguard.Await(t, qIn, 5*time.Second, "Q at the server")
			refusedThenCut(t, clock, tr, srv.URL)
			results := make([]result, 2)
			clock.drive(t, 2, func(i int) {
				results[i] = call(context.Background(), tr, srv.URL, strconv.Itoa(i))
			})
			if at := srv.arrivals(); !slices.Equal(at, tc.arrivals) {
				t.Errorf("arrivals %v, want %v: the handed probe went into the hold", at, tc.arrivals)
			}
			if got := tally(results); !maps.Equal(got, tc.results) {
				t.Errorf("results %v, want %v", got, tc.results)
			}
			if keys := tr.ProbesOut(); len(keys) != 0 {
				t.Errorf("keys %v have a probe out", keys)
			}
		})
	}
}

// WithMaxRetryAfter(0) honours no wait a server asks for: nothing is held,
// and so nothing is cut short, and no request waits for a probe's answer.
// After a refusal for the hour, five concurrent requests are all at the
// server together and nothing sleeps; before, they went one at a time,
// each waiting for the refusal of the one before, into the same refusal.
// So with proactive pacing off (no hold at all), as before.
func TestNoProbeWithoutHolds(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  client.Option
	}{
		{"WithMaxRetryAfter(0)", client.WithMaxRetryAfter(0)},
		{"WithProactive(false)", client.WithProactive(false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			const callers = 5
			var at atomic.Int64
			var timedOut atomic.Bool
			all := make(chan struct{})
			srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				if n > 1 {
					if at.Add(1) == callers {
						close(all)
					} else if !timedOut.Load() {
						if _, ok := hangguard.Within(all, 5*time.Second); !ok {
							timedOut.Store(true)
							t.Error("the callers were not all at the server together")
						}
					}
				}
				refuseForTheHour(w, clock.Now(), "Retry-After")
			})
			_, tr := newClient(t, clock, tc.opt)
			if got := call(context.Background(), tr, srv.URL, "first"); got.status != http.StatusTooManyRequests {
				t.Fatalf("first request: got %d %v, want the 429", got.status, got.err)
			}
			results := make([]result, callers)
			var wg sync.WaitGroup
			for i := range callers {
				wg.Go(func() { results[i] = call(context.Background(), tr, srv.URL, strconv.Itoa(i)) })
			}
			hangguard.Run(t, 30*time.Second, "the callers did not return", wg.Wait)
			if got, want := tally(results), map[string]int{"429": callers}; !maps.Equal(got, want) {
				t.Errorf("results %v, want %v", got, want)
			}
			if s := clock.Sleeps(); len(s) != 0 {
				t.Errorf("slept %v, want no wait", s)
			}
		})
	}
}

// The probe's answer is given when its response comes back, before its
// caller sees it: a caller that never reads nor closes the body, or whose
// context ends as the response arrives, strands nobody. The request that
// waited for the probe goes at once, admitted.
func TestProbeAnswerNeedsNoCaller(t *testing.T) {
	for _, how := range []string{"body never read", "context ends as the answer arrives"} {
		t.Run(how, func(t *testing.T) {
			clock := newFakeClock()
			probeIn := make(chan struct{})
			srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				switch n {
				case 1:
					refuseForTheHour(w, clock.Now(), "Retry-After")
				case 2:
					close(probeIn)
					awaitSleepers(t, clock, 1, "the other waiting for the probe")
					io.WriteString(w, strings.Repeat("x", 1<<20))
				default:
					io.WriteString(w, "ok")
				}
			})
			inner := &http.Transport{}
			t.Cleanup(inner.CloseIdleConnections)
			probeCtx, cancel := context.WithCancel(context.Background())
			defer cancel()
			next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
				resp, err := inner.RoundTrip(r)
				if how == "context ends as the answer arrives" && r.Context() == probeCtx {
					cancel()
				}
				return resp, err
			})
			tr, err := client.New(next, client.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			refusedThenCut(t, clock, tr, srv.URL)
			var other result
			var probeResp *http.Response
			clock.drive(t, 2, func(i int) {
				if i == 0 {
					r, _ := http.NewRequestWithContext(probeCtx, http.MethodGet, srv.URL, nil)
					probeResp, _ = tr.RoundTrip(r) // its body left unread, open
					return
				}
				// The other comes once the probe is out.
				if _, ok := hangguard.Within(probeIn, 5*time.Second); !ok {
					t.Error("the probe did not reach the server")
				}
				other = call(context.Background(), tr, srv.URL, "other")
			})
			if probeResp != nil {
				defer probeResp.Body.Close()
			}
			if other.err != nil || other.status != http.StatusOK {
				t.Errorf("other: got %d %v, want 200", other.status, other.err)
			}
			if at, want := srv.arrivals(), []time.Duration{0, 61 * time.Second, 61 * time.Second}; !slices.Equal(at, want) {
				t.Errorf("arrivals %v, want %v", at, want)
			}
		})
	}
}
