package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// The tests of this file follow a server that refuses everything for an
// hour, from t0, and says so: more than WithMaxRetryAfter (1 minute by
// default), so the Transport cuts the hold that other requests wait behind
// to 1 minute. Once that cut hold has passed, the server's hour still
// ahead, only one request of the key goes out at a time (the probe).

// hourEnd is the end of the hour the refusing server announces.
var hourEnd = t0.Add(time.Hour)

// refuseForTheHour writes a refusal that announces the rest of the hour,
// in Retry-After or in legacy X-RateLimit fields (a reset as a Unix time,
// no quota left), as form says.
func refuseForTheHour(w http.ResponseWriter, now time.Time, form string) {
	switch form {
	case "Retry-After":
		secs := (hourEnd.Sub(now) + time.Second - 1) / time.Second
		w.Header().Set("Retry-After", strconv.FormatInt(int64(secs), 10))
	case "X-RateLimit":
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(hourEnd.Unix(), 10))
	default:
		panic("unknown form " + form)
	}
	w.WriteHeader(http.StatusTooManyRequests)
}

// refusedThenCut sends a first request through tr, which the server
// refuses for the hour (a hold cut to the maximum of a minute), and moves
// clock past that cut hold: the next request goes as the probe.
func refusedThenCut(t *testing.T, clock *fakeClock, tr http.RoundTripper, url string) {
	t.Helper()
	if got := call(context.Background(), tr, url, "first"); got.status != http.StatusTooManyRequests {
		t.Fatalf("first request: got %d %v, want the 429", got.status, got.err)
	}
	clock.Advance(61 * time.Second)
}

// probeThenOther sends a probe through tr and, once it is at the server
// (probeIn closed), another request, which closes otherDone as it
// returns; it returns what each got once both have returned.
func probeThenOther(t *testing.T, tr http.RoundTripper, url string, probeIn <-chan struct{}, otherDone chan<- struct{}) (probe, other result) {
	t.Helper()
	var wg sync.WaitGroup
	wg.Go(func() { probe = call(context.Background(), tr, url, "probe") })
	if _, ok := hangguard.Within(probeIn, 5*time.Second); !ok {
		t.Fatal("the probe did not reach the server")
	}
	wg.Go(func() {
		other = call(context.Background(), tr, url, "other")
		close(otherDone)
	})
	hangguard.Run(t, 5*time.Second, "the callers did not return", wg.Wait)
	return probe, other
}

// A result is what a caller got: a status or an error.
type result struct {
	status int
	err    error
}

// call sends a GET to url through tr as caller and returns what it got.
func call(ctx context.Context, tr http.RoundTripper, url, caller string) result {
	r, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	r.Header.Set("X-Caller", caller)
	resp, err := tr.RoundTrip(r)
	if err != nil {
		return result{err: err}
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return result{status: resp.StatusCode}
}

// tally counts the results by kind: "200", "429", "WaitError" (a
// *WaitError for a server's hold, or for a turn in the queue that hold
// pushed back), or the error's text.
func tally(results []result) map[string]int {
	m := map[string]int{}
	for _, r := range results {
		var we *client.WaitError
		switch {
		case r.err == nil:
			m[strconv.Itoa(r.status)]++
		case errors.As(r.err, &we) && errors.Is(r.err, client.ErrWaitTooLong):
			m["WaitError"]++
		default:
			m[r.err.Error()]++
		}
	}
	return m
}

// A refusal announcing an hour gives up at once and holds the key for the
// cut minute. Callers arriving after that minute, the hour still ahead,
// send one probe: the others wait for its answer, asleep, instead of
// earning 19 more refusals. The probe is refused for the rest of the hour:
// the hold is renewed (cut again), and the others, which may wait a minute
// (WithMaxWait), wait for it; then one of them probes and the rest, their
// minute spent, give up unsent. Once the server admits the probe, the
// hold is lifted and everyone goes, paced when pacing is on.
func TestCutHoldSendsOneProbe(t *testing.T) {
	paced := []time.Duration{200 * time.Second, 200100 * time.Millisecond, 200200 * time.Millisecond, 200300 * time.Millisecond, 200400 * time.Millisecond}
	for _, tc := range []struct {
		name, form string
		callers    int
		opts       []client.Option
		// The instants of the phase after the server starts admitting.
		admitted []time.Duration
	}{
		{"Retry-After", "Retry-After", 20, nil, repeat(200*time.Second, 20)},
		{"X-RateLimit reset", "X-RateLimit", 20, nil, repeat(200*time.Second, 20)},
		{"Retry-After paced", "Retry-After", 5, []client.Option{client.WithRate(10, time.Second)}, paced},
		// A hold from rate-limit fields leaves the requests in the queue
		// their turns, but not while the key is cut: the server said no.
		{"X-RateLimit reset paced", "X-RateLimit", 5, []client.Option{client.WithRate(10, time.Second)}, paced},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			var admit atomic.Bool
			// check, when set, is the number of the request (counted
			// from 1) that arrives as the probe: while it is at the
			// server, every other caller must be asleep in the clock.
			var check atomic.Int64
			srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				if int64(n) == check.Load() {
					awaitSleepers(t, clock, tc.callers-1, fmt.Sprintf("request %d at the server", n))
				}
				if admit.Load() {
					io.WriteString(w, "ok")
					return
				}
				refuseForTheHour(w, clock.Now(), tc.form)
			})
			_, tr := newClient(t, clock, tc.opts...)

			// 0s: refused for an hour; given up at once.
			if got := call(context.Background(), tr, srv.URL, "first"); got.err != nil || got.status != http.StatusTooManyRequests {
				t.Fatalf("first request: got %d %v, want the 429", got.status, got.err)
			}

			// 61s: the cut hold has passed, the hour has not.
			clock.Advance(61 * time.Second)
			check.Store(2)
			results := make([]result, tc.callers)
			clock.drive(t, tc.callers, func(i int) {
				results[i] = call(context.Background(), tr, srv.URL, strconv.Itoa(i))
			})
			if at, want := srv.arrivals(), []time.Duration{0, 61 * time.Second, 121 * time.Second}; !slices.Equal(at, want) {
				t.Errorf("arrivals %v, want %v: one probe at the end of each cut hold", at, want)
			}
			want := map[string]int{"429": 2, "WaitError": tc.callers - 2}
			if got := tally(results); !maps.Equal(got, want) {
				t.Errorf("results %v, want %v", got, want)
			}

			// 200s: the server admits again, before its hour is over.
			admit.Store(true)
			clock.Advance(200*time.Second - clock.Now().Sub(t0))
			before := len(srv.arrivals())
			check.Store(int64(before) + 1)
			clock.drive(t, tc.callers, func(i int) {
				results[i] = call(context.Background(), tr, srv.URL, strconv.Itoa(i))
			})
			if at := srv.arrivals()[before:]; !slices.Equal(at, tc.admitted) {
				t.Errorf("arrivals once admitted %v, want %v", at, tc.admitted)
			}
			if got, want := tally(results), map[string]int{"200": tc.callers}; !maps.Equal(got, want) {
				t.Errorf("results once admitted %v, want %v", got, want)
			}
		})
	}
}

func repeat(d time.Duration, n int) []time.Duration {
	s := make([]time.Duration, n)
	for i := range s {
		s[i] = d
	}
	return s
}

// A probe that ends without an answer — its context ends at the server, or
// the transport fails — does not strand the requests waiting for it: the
// next one becomes the probe at once (while the third still waits), and,
// admitted, lets the last go. Without the hand-off they would wait their
// minute for an answer that never comes.
func TestProbeWithoutAnswerHandsOn(t *testing.T) {
	for _, how := range []string{"context ends", "transport error"} {
		t.Run(how, func(t *testing.T) {
			clock := newFakeClock()
			var mu sync.Mutex
			cancels := map[string]context.CancelFunc{}
			var order []string
			srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				caller := r.Header.Get("X-Caller")
				mu.Lock()
				order = append(order, caller)
				mu.Unlock()
				switch n {
				case 1:
					refuseForTheHour(w, clock.Now(), "Retry-After")
				case 2:
					// The probe: the two others wait for it; then it
					// goes away (or its answer is lost on the way).
					awaitSleepers(t, clock, 2, "the first probe at the server")
					if how == "transport error" {
						io.WriteString(w, "ok")
						return
					}
					mu.Lock()
					cancel := cancels[caller]
					mu.Unlock()
					cancel()
					if _, ok := hangguard.Within(r.Context().Done(), 5*time.Second); !ok {
						t.Error("the probe's request did not end at the server")
					}
				case 3:
					// The second probe, while the third caller waits.
					awaitSleepers(t, clock, 1, "the second probe at the server")
					io.WriteString(w, "ok")
				default:
					io.WriteString(w, "ok")
				}
			})
			next := http.RoundTripper(&http.Transport{})
			t.Cleanup(next.(*http.Transport).CloseIdleConnections)
			if how == "transport error" {
				// The probe's answer is lost: the connection fails.
				inner := next
				var calls atomic.Int64
				next = roundTripFunc(func(r *http.Request) (*http.Response, error) {
					resp, err := inner.RoundTrip(r)
					if err == nil && calls.Add(1) == 2 {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						return nil, errors.New("connection reset by peer")
					}
					return resp, err
				})
			}
			tr, err := client.New(next, client.WithClock(clock))
			if err != nil {
				t.Fatal(err)
			}
			refusedThenCut(t, clock, tr, srv.URL)
			results := make([]result, 3)
			ctxs := make([]context.Context, 3)
			for i := range ctxs {
				var cancel context.CancelFunc
				ctxs[i], cancel = context.WithCancel(context.Background())
				defer cancel()
				cancels[strconv.Itoa(i)] = cancel
			}
			clock.drive(t, 3, func(i int) {
				results[i] = call(ctxs[i], tr, srv.URL, strconv.Itoa(i))
			})
			if at, want := srv.arrivals(), []time.Duration{0, 61 * time.Second, 61 * time.Second, 61 * time.Second}; !slices.Equal(at, want) {
				t.Errorf("arrivals %v, want %v: the probe's role was not handed on at once", at, want)
			}
			mu.Lock()
			first := order[1]
			mu.Unlock()
			for i, r := range results {
				switch {
				case strconv.Itoa(i) == first:
					if r.err == nil {
						t.Errorf("the first probe (caller %d) got %d, want an error", i, r.status)
					}
				case r.err != nil || r.status != http.StatusOK:
					t.Errorf("caller %d: got %d %v, want 200", i, r.status, r.err)
				}
			}
		})
	}
}

// A request that cannot wait for the probe's answer (a maximum wait of 0)
// fails at once with a held *WaitError, unsent, while the probe is at the
// server.
func TestProbeWaitBeyondMaxWaitFailsUnsent(t *testing.T) {
	clock := newFakeClock()
	probeIn := make(chan struct{})
	otherDone := make(chan struct{})
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 2 {
			// The probe: the other caller has its answer before it.
			close(probeIn)
			if _, ok := hangguard.Within(otherDone, 5*time.Second); !ok {
				t.Error("the other caller did not return while the probe was at the server")
			}
		}
		refuseForTheHour(w, clock.Now(), "Retry-After")
	})
	_, tr := newClient(t, clock, client.WithMaxWait(0))
	refusedThenCut(t, clock, tr, srv.URL)
	// No drive: nothing waits on the clock.
	probe, other := probeThenOther(t, tr, srv.URL, probeIn, otherDone)
	if probe.err != nil || probe.status != http.StatusTooManyRequests {
		t.Errorf("probe: got %d %v, want the 429", probe.status, probe.err)
	}
	var we *client.WaitError
	if !errors.As(other.err, &we) || !we.Held || we.Wait <= we.MaxWait {
		t.Errorf("other: got %d %v, want a held *WaitError", other.status, other.err)
	}
	if at, want := srv.arrivals(), []time.Duration{0, 61 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v: the other request was sent", at, want)
	}
}

// A request to a key with no hold allocates nothing in the Transport, as
// before the probes, even while another key's hold is cut short: with
// proactive pacing on or off, paced or not (the clock never waits).
func TestRoundTripWithoutHoldAllocatesNothing(t *testing.T) {
	resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody}
	next := roundTripFunc(func(*http.Request) (*http.Response, error) { return resp, nil })
	req, _ := http.NewRequest(http.MethodGet, "http://api.example.com/v1/thing", nil)
	for _, tc := range []struct {
		name string
		opts []client.Option
	}{
		{"proactive", nil},
		{"proactive paced", []client.Option{client.WithRate(100_000_000, time.Second), client.WithMaxWait(time.Second)}},
		{"not proactive", []client.Option{client.WithProactive(false)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &benchClock{}
			tr, err := client.New(next, append(tc.opts, client.WithClock(clock))...)
			if err != nil {
				t.Fatal(err)
			}
			// Another key is refused for an hour, cut to a minute.
			tr.Observe("other.example", http.Header{"Retry-After": {"3600"}}, clock.Now())
			if n := testing.AllocsPerRun(100, func() {
				if _, err := tr.RoundTrip(req); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("RoundTrip allocates %v times, want 0", n)
			}
		})
	}
}

// A probe answered with a refusal asking for a wait within the maximum
// lifts the cut: the probe retries after that wait, and the requests that
// waited for its answer wait for the same hold, then go, all at once.
func TestProbeAnsweredWithShortWaitLiftsTheCut(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 1:
			refuseForTheHour(w, clock.Now(), "Retry-After")
		case 2:
			awaitSleepers(t, clock, 2, "the probe at the server")
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			io.WriteString(w, "ok")
		}
	})
	_, tr := newClient(t, clock)
	refusedThenCut(t, clock, tr, srv.URL)
	results := make([]result, 3)
	clock.drive(t, 3, func(i int) {
		results[i] = call(context.Background(), tr, srv.URL, strconv.Itoa(i))
	})
	if at, want := srv.arrivals(), []time.Duration{0, 61 * time.Second, 66 * time.Second, 66 * time.Second, 66 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
	if got, want := tally(results), map[string]int{"200": 3}; !maps.Equal(got, want) {
		t.Errorf("results %v, want %v", got, want)
	}
}

// While a probe is slow at the server (the clock moves on while it is
// there), a request waiting for its answer fails with a held *WaitError,
// unsent, when its maximum wait ends first; and goes, without the answer,
// when the end of the wait the server announced comes first.
func TestSlowProbe(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ra      string        // the first refusal's Retry-After
		maxWait time.Duration // WithMaxWait
		advance time.Duration // how long the probe stays at the server
		// The other caller: the arrivals, and the *WaitError's Wait (0:
		// none, the request was sent).
		arrivals []time.Duration
		wait     time.Duration
	}{
		{"maximum wait first", "3600", 10 * time.Second, 10 * time.Second,
			[]time.Duration{0, 61 * time.Second}, 10*time.Second + time.Hour - 71*time.Second},
		{"server's end first", "62", time.Minute, time.Second,
			[]time.Duration{0, 61 * time.Second, 62 * time.Second}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newFakeClock()
			probeIn := make(chan struct{})
			otherDone := make(chan struct{})
			srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
				switch {
				case n == 1:
					w.Header().Set("Retry-After", tc.ra)
					w.WriteHeader(http.StatusTooManyRequests)
				case r.Header.Get("X-Caller") == "probe":
					close(probeIn)
					if awaitSleepers(t, clock, 1, "the other caller waiting for the probe") {
						clock.Advance(tc.advance)
					}
					if _, ok := hangguard.Within(otherDone, 5*time.Second); !ok {
						t.Error("the other caller did not return while the probe was at the server")
					}
					io.WriteString(w, "ok")
				default:
					io.WriteString(w, "ok")
				}
			})
			_, tr := newClient(t, clock, client.WithMaxWait(tc.maxWait))
			refusedThenCut(t, clock, tr, srv.URL)
			// No drive: the clock moves only as the probe's server says.
			probe, other := probeThenOther(t, tr, srv.URL, probeIn, otherDone)
			if probe.err != nil || probe.status != http.StatusOK {
				t.Errorf("probe: got %d %v, want 200", probe.status, probe.err)
			}
			var we *client.WaitError
			switch {
			case tc.wait == 0 && (other.err != nil || other.status != http.StatusOK):
				t.Errorf("other: got %d %v, want 200", other.status, other.err)
			case tc.wait != 0 && (!errors.As(other.err, &we) || !we.Held || we.Wait != tc.wait):
				t.Errorf("other: got %d %v, want a held *WaitError of %v", other.status, other.err, tc.wait)
			}
			if at := srv.arrivals(); !slices.Equal(at, tc.arrivals) {
				t.Errorf("arrivals %v, want %v", at, tc.arrivals)
			}
		})
	}
}
