package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/client"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// Seed 002: a third-party API allows 5 requests per second; queueing the
// calls through a leaky bucket is kinder than failing them. 50 callers at
// once: the stub sees at most 5 in any second of virtual time, exactly one
// every 200ms, and no caller sees an error.
func TestPacingFiftyCallers(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, nil)
	hc, _ := newClient(t, clock, client.WithRate(5, time.Second), client.WithMaxWait(10*time.Second))

	const n = 50
	var failed atomic.Int64
	clock.drive(t, n, func(i int) {
		status, body, err := get(hc, srv.URL+"/v1/thing")
		if err != nil || status != http.StatusOK || body != "ok" {
			failed.Add(1)
			t.Errorf("caller %d: status %d body %q err %v", i, status, body, err)
		}
	})
	if failed.Load() != 0 {
		return
	}
	at := srv.arrivals()
	if len(at) != n {
		t.Fatalf("stub received %d requests, want %d", len(at), n)
	}
	if !sort.SliceIsSorted(at, func(i, j int) bool { return at[i] < at[j] }) {
		t.Errorf("arrivals out of order: %v", at)
	}
	// At most 5 in any half-open second [s, s+1s), s any instant: a
	// sliding window over the stub's own receive instants.
	if n, from := maxInWindow(at, time.Second); n > 5 {
		t.Errorf("%d requests arrived within the second from %v: %v", n, from, at)
	}
	// The queue is exact: departures at 0, 200ms, ..., 9.8s.
	for i, a := range at {
		if want := time.Duration(i) * 200 * time.Millisecond; a != want {
			t.Fatalf("request %d arrived at %v, want %v", i, a, want)
		}
	}
}

// maxInWindow returns the largest number of the sorted instants at that lie
// in one half-open window [s, s+w), over every s, and the first instant of
// such a window. It is a sliding window: s need not be a whole second.
func maxInWindow(at []time.Duration, w time.Duration) (n int, from time.Duration) {
	j := 0
	for i := range at {
		for at[i]-at[j] >= w {
			j++
		}
		if i-j+1 > n {
			n, from = i-j+1, at[j]
		}
	}
	return n, from
}

// The window check itself: it finds six requests within a second that no
// fixed second [k, k+1) holds.
func TestMaxInWindow(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	for _, tc := range []struct {
		at   []time.Duration
		n    int
		from time.Duration
	}{
		{nil, 0, 0},
		{ms(0, 200, 400, 600, 800, 1000, 1200), 5, 0},
		// Three at the end of one second and three at the start of the
		// next: no fixed second holds more than 3, the window from 700ms
		// holds 6.
		{ms(0, 700, 800, 900, 1000, 1100, 1200, 2500), 6, 700 * time.Millisecond},
		{ms(0, 999, 999, 1999), 3, 0},
		{ms(0, 1000, 2000), 1, 0},
	} {
		if n, from := maxInWindow(tc.at, time.Second); n != tc.n || from != tc.from {
			t.Errorf("maxInWindow(%v) = %d from %v, want %d from %v", tc.at, n, from, tc.n, tc.from)
		}
	}
}

// The Done-when test again, each caller with its own context: every third
// caller's context is cancelled at 3.1s of virtual time (between two turns,
// so that the cancelled callers are all waiting, none sending). The others are all served without an error; the cancelled ones
// that had not yet been sent are never sent; and the stub still sees at
// most 5 requests in any second (an abandoned turn is not handed to a
// later caller early: the queue never speeds up).
func TestPacingFiftyCallersSomeCancelled(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, nil)
	hc, _ := newClient(t, clock, client.WithRate(5, time.Second), client.WithMaxWait(10*time.Second))

	const n = 50
	ctxs := make([]context.Context, n)
	cancels := make([]context.CancelFunc, n)
	for i := range ctxs {
		ctxs[i], cancels[i] = context.WithCancel(context.Background())
		defer cancels[i]()
	}
	var served, cancelled atomic.Int64
	clock.drive(t, n+1, func(i int) {
		if i == n { // the canceller
			clock.Sleep(context.Background(), 3100*time.Millisecond)
			for j := 0; j < n; j += 3 {
				cancels[j]()
			}
			return
		}
		req, _ := http.NewRequestWithContext(ctxs[i], http.MethodGet, srv.URL, nil)
		resp, err := hc.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			served.Add(1)
			return
		}
		if i%3 == 0 && errors.Is(err, context.Canceled) {
			cancelled.Add(1)
			return
		}
		t.Errorf("caller %d: %v", i, err)
	})
	at := srv.arrivals()
	if int64(len(at)) != served.Load() {
		t.Errorf("stub received %d requests, %d callers served", len(at), served.Load())
	}
	// Turns run 200ms apart from 0: by 3.1s the 16 callers whose turns
	// came at 0 to 3s have been served; of the 17 to be cancelled at least
	// one was still waiting, and no caller that was not is cancelled.
	if c := cancelled.Load(); c < 1 || c > 17 || served.Load()+c != n {
		t.Errorf("%d served and %d cancelled, want all %d accounted for, 1 to 17 cancelled", served.Load(), c, n)
	}
	if len(at) < 16 || at[15] != 3*time.Second {
		t.Errorf("arrivals %v, want 16 turns 200ms apart by 3s", at)
	}
	if n, from := maxInWindow(at, time.Second); n > 5 {
		t.Errorf("%d requests arrived within the second from %v: %v", n, from, at)
	}
	for i := 1; i < len(at); i++ {
		if at[i]-at[i-1] < 200*time.Millisecond {
			t.Errorf("requests %d and %d only %v apart", i-1, i, at[i]-at[i-1])
		}
	}
}

// Keys are paced separately: two hosts each get their own 1-per-second queue.
func TestPacingPerKey(t *testing.T) {
	clock := newFakeClock()
	a := newStub(t, clock, nil)
	b := newStub(t, clock, nil)
	hc, _ := newClient(t, clock, client.WithRate(1, time.Second))
	clock.drive(t, 6, func(i int) {
		url := a.URL
		if i%2 == 1 {
			url = b.URL
		}
		if _, _, err := get(hc, url); err != nil {
			t.Error(err)
		}
	})
	for name, s := range map[string]*stub{"a": a, "b": b} {
		at := s.arrivals()
		want := []time.Duration{0, time.Second, 2 * time.Second}
		if len(at) != len(want) {
			t.Fatalf("%s: arrivals %v, want %v", name, at, want)
		}
		for i := range want {
			if at[i] != want[i] {
				t.Errorf("%s: arrivals %v, want %v", name, at, want)
				break
			}
		}
	}
}

// A custom key function shares one queue between hosts, and "" exempts a
// request.
func TestPacingCustomKey(t *testing.T) {
	clock := newFakeClock()
	a := newStub(t, clock, nil)
	b := newStub(t, clock, nil)
	hc, _ := newClient(t, clock, client.WithRate(1, time.Second),
		client.WithKey(func(r *http.Request) string {
			if r.Header.Get("X-Unpaced") != "" {
				return ""
			}
			return "shared"
		}))
	clock.drive(t, 4, func(i int) {
		url := a.URL
		if i%2 == 1 {
			url = b.URL
		}
		if _, _, err := get(hc, url); err != nil {
			t.Error(err)
		}
	})
	all := append(a.arrivals(), b.arrivals()...)
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	want := []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second}
	if len(all) != 4 {
		t.Fatalf("arrivals %v, want %v", all, want)
	}
	for i := range want {
		if all[i] != want[i] {
			t.Fatalf("arrivals %v, want %v (one shared queue)", all, want)
		}
	}
	// An exempt request goes at once although the queue is 4s long.
	req, _ := http.NewRequest(http.MethodGet, a.URL, nil)
	req.Header.Set("X-Unpaced", "1")
	before := len(clock.Sleeps())
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := clock.Sleeps()[before:]; len(got) != 0 {
		t.Errorf("exempt request slept %v", got)
	}
}

// Beyond the maximum wait a request fails at once with a *WaitError, sends
// nothing and takes nothing from the queue.
func TestMaxWait(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, nil)
	hc, _ := newClient(t, clock, client.WithRate(5, time.Second), client.WithMaxWait(time.Second))

	// The queue holds 6 departures within 1s: at 0, 200ms, ..., 1s.
	var mu sync.Mutex
	var waitErrs []*client.WaitError
	ok := 0
	clock.drive(t, 8, func(int) {
		_, _, err := get(hc, srv.URL)
		mu.Lock()
		defer mu.Unlock()
		var we *client.WaitError
		switch {
		case err == nil:
			ok++
		case errors.As(err, &we) && errors.Is(err, client.ErrWaitTooLong):
			waitErrs = append(waitErrs, we)
		default:
			t.Errorf("unexpected error %v", err)
		}
	})
	if ok != 6 || len(waitErrs) != 2 {
		t.Fatalf("%d sent and %d refused, want 6 and 2", ok, len(waitErrs))
	}
	for _, we := range waitErrs {
		if we.Wait != 1200*time.Millisecond || we.MaxWait != time.Second || we.Held {
			t.Errorf("WaitError %+v, want Wait 1.2s MaxWait 1s", we)
		}
		if !strings.Contains(we.Error(), "client: ") || !strings.Contains(we.Error(), "1.2s") {
			t.Errorf("message %q", we.Error())
		}
	}
	if got := len(srv.arrivals()); got != 6 {
		t.Errorf("stub received %d, want 6", got)
	}
	// Refused at once: the only sleeps are the 5 queued departures.
	if got := clock.Sleeps(); len(got) != 5 {
		t.Errorf("sleeps %v, want the 5 turns of the queued requests", got)
	}
	// The refusals took nothing: the next departure is at 1.2s, right after
	// the sixth (at 1.6s had the two refusals taken turns).
	clock.drive(t, 1, func(int) {
		if _, _, err := get(hc, srv.URL); err != nil {
			t.Error(err)
		}
	})
	if at := srv.arrivals(); at[len(at)-1] != 1200*time.Millisecond {
		t.Errorf("last arrival at %v, want 1.2s", at[len(at)-1])
	}
}

// countingBody records whether the transport closed the request body.
type countingBody struct {
	io.Reader
	closed atomic.Bool
}

func (b *countingBody) Close() error { b.closed.Store(true); return nil }

// A caller whose context ends while it waits gets ctx.Err() at once; its
// request is never sent and its body is closed. Its turn, the queue's last,
// goes back to the store: the next caller takes it.
func TestContextCancelledWhileWaiting(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, nil)
	_, tr := newClient(t, clock, client.WithRate(1, 10*time.Second))

	first, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	resp, err := tr.RoundTrip(first)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	ctx, cancel := context.WithCancel(context.Background())
	body := &countingBody{Reader: strings.NewReader("payload")}
	second, _ := http.NewRequestWithContext(ctx, http.MethodPut, srv.URL, body)
	done := make(chan error, 1)
	go func() {
		resp, err := tr.RoundTrip(second)
		if resp != nil {
			resp.Body.Close()
		}
		done <- err
	}()
	clock.waitSleepers(t, 1, "the second request waiting for its turn, 10s away")
	cancel()
	if err := hangguard.Await(t, done, waitBound, "the cancelled request returned"); !errors.Is(err, context.Canceled) {
		t.Fatalf("RoundTrip = %v, want context.Canceled", err)
	}
	if !body.closed.Load() {
		t.Error("request body not closed")
	}
	if got := clock.Now(); !got.Equal(t0) {
		t.Errorf("virtual time moved to %v", got.Sub(t0))
	}
	if got := len(srv.arrivals()); got != 1 {
		t.Errorf("stub received %d, want 1", got)
	}
	// Given back: the third request takes the abandoned one's turn, at 10s.
	clock.drive(t, 1, func(int) {
		third, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		resp, err := tr.RoundTrip(third)
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	})
	if at := srv.arrivals(); len(at) != 2 || at[1] != 10*time.Second {
		t.Errorf("arrivals %v, want [0s 10s]", at)
	}
}

// A caller that leaves from the middle of the queue: the caller behind it
// moves up to its turn, and the last turn goes back to the store, so the
// next caller does not wait behind a turn nobody takes.
func TestContextCancelledMidQueue(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, nil)
	_, tr := newClient(t, clock, client.WithRate(1, 10*time.Second))
	send := func(ctx context.Context) error { return roundTrip(ctx, tr, srv.URL, "") }
	if err := send(context.Background()); err != nil { // at once
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	left := make(chan error, 1)
	clock.drive(t, 3, func(i int) {
		switch i {
		case 0: // queued second, turn at 10s; leaves
			left <- send(ctx)
		case 1: // queued third, turn at 20s
			if !awaitSleepers(t, clock, 1, "the second waiting for its turn") {
				return
			}
			if err := send(context.Background()); err != nil {
				t.Error(err)
			}
		case 2: // arrives once the second has left
			if !awaitSleepers(t, clock, 2, "the second and third waiting for their turns") {
				return
			}
			cancel()
			if err, ok := hangguard.Within(left, waitBound); !ok {
				t.Errorf("the caller that left did not return within %v", waitBound)
				return
			} else if !errors.Is(err, context.Canceled) {
				t.Errorf("the caller that left got %v", err)
			}
			if err := send(context.Background()); err != nil {
				t.Error(err)
			}
		}
	})
	if at := srv.arrivals(); !slices.Equal(at, []time.Duration{0, 10 * time.Second, 20 * time.Second}) {
		t.Errorf("arrivals %v, want [0s 10s 20s]: the third moves up to 10s, the fourth takes 20s", at)
	}
}

// A context that ends before RoundTrip is not waited on at all.
func TestContextDoneBeforeSend(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, nil)
	_, tr := newClient(t, clock, client.WithRate(1, time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if _, err := tr.RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("RoundTrip = %v, want context.Canceled", err)
	}
	if n := len(srv.arrivals()); n != 0 {
		t.Errorf("stub received %d", n)
	}
}

// nopStore fails every Take.
type nopStore struct{}

var errStoreDown = errors.New("store down")

func (nopStore) Take(context.Context, ...algorithms.Check) ([]algorithms.Decision, error) {
	return nil, errStoreDown
}

// A failing store fails the request, with its error wrapped, before it is sent.
func TestStoreError(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, nil)
	_, tr := newClient(t, clock, client.WithRate(5, time.Second), client.WithStore(nopStore{}))
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	_, err := tr.RoundTrip(req)
	if !errors.Is(err, errStoreDown) || !strings.HasPrefix(err.Error(), "client: pacing store: ") {
		t.Fatalf("RoundTrip = %v, want the store error wrapped", err)
	}
	if n := len(srv.arrivals()); n != 0 {
		t.Errorf("stub received %d", n)
	}
}

// Two transports sharing one store (as a fleet shares Redis) pace together:
// their requests to the same host leave from one queue.
func TestSharedStorePacesTogether(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, nil)
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := newClient(t, clock, client.WithRate(4, time.Second), client.WithStore(store))
	b, _ := newClient(t, clock, client.WithRate(4, time.Second), client.WithStore(store))
	clock.drive(t, 8, func(i int) {
		hc := a
		if i%2 == 1 {
			hc = b
		}
		if _, _, err := get(hc, srv.URL); err != nil {
			t.Error(err)
		}
	})
	at := srv.arrivals()
	if len(at) != 8 {
		t.Fatalf("arrivals %v", at)
	}
	for i, a := range at {
		if want := time.Duration(i) * 250 * time.Millisecond; a != want {
			t.Fatalf("arrivals %v, want one every 250ms", at)
		}
	}
}

// As WithStore says, Transports sharing a store pace together only when
// their Specs are equal: a different maximum wait is a different queue.
// If this test fails, the store no longer keeps leaky_queue state per
// MaxDelay: update the WithStore doc.
func TestSharedStoreSpecsMustMatch(t *testing.T) {
	clock := newFakeClock()
	srv := newStub(t, clock, nil)
	store, err := algorithms.NewMemoryStore(algorithms.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := newClient(t, clock, client.WithRate(4, time.Second), client.WithStore(store), client.WithMaxWait(time.Minute))
	b, _ := newClient(t, clock, client.WithRate(4, time.Second), client.WithStore(store), client.WithMaxWait(30*time.Second))
	clock.drive(t, 4, func(i int) {
		hc := a
		if i%2 == 1 {
			hc = b
		}
		if _, _, err := get(hc, srv.URL); err != nil {
			t.Error(err)
		}
	})
	if at, want := srv.arrivals(), []time.Duration{0, 0, 250 * time.Millisecond, 250 * time.Millisecond}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v (two queues)", at, want)
	}
}

// Many callers, several hosts, refusals and holds mixed: every caller is
// served in the end, and each host still sees its requests at least
// 100ms apart (retries take turns too). Run with -race, this is also the
// concurrency test of the holds and the queue.
func TestPacingUnderRefusals(t *testing.T) {
	clock := newFakeClock()
	var stubs []*stub
	for range 4 {
		stubs = append(stubs, newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
			switch n % 5 {
			case 1:
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
			case 3:
				w.Header().Set("RateLimit", `"default";r=0;t=1`)
				io.WriteString(w, "ok")
			case 4:
				w.WriteHeader(http.StatusServiceUnavailable) // no Retry-After: backoff
			default:
				io.WriteString(w, "ok")
			}
		}))
	}
	hc, _ := newClient(t, clock, client.WithRate(10, time.Second), client.WithRetries(10),
		client.WithBackoff(100*time.Millisecond, time.Second))
	clock.drive(t, 40, func(i int) {
		if status, _, err := get(hc, stubs[i%len(stubs)].URL); err != nil || status != 200 {
			t.Errorf("caller %d: %d %v", i, status, err)
		}
	})
	for i, s := range stubs {
		at := s.arrivals()
		if len(at) < 10 {
			t.Errorf("host %d saw %d requests, want at least its 10 callers", i, len(at))
		}
		for j := 1; j < len(at); j++ {
			if at[j]-at[j-1] < 100*time.Millisecond {
				t.Errorf("host %d: requests %d and %d only %s apart", i, j-1, j, at[j]-at[j-1])
			}
		}
	}
}
