package client_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// orderServer refuses its first request for the hour, then answers each
// request after latency: with another refusal for the hour while refusals
// are left, else with a 200. It records the callers in the order it
// received them, and when.
type orderServer struct {
	mu       sync.Mutex
	latency  time.Duration
	refusals int // refusals for the hour left, after the first
	callers  []string
	at       []time.Time
}

func (s *orderServer) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.callers = append(s.callers, r.Header.Get("X-Caller"))
	s.at = append(s.at, time.Now())
	first := len(s.callers) == 1
	refuse := first || s.refusals > 0
	if !first && refuse {
		s.refusals--
	}
	s.mu.Unlock()
	if !first {
		time.Sleep(s.latency)
	}
	h := http.Header{}
	status := http.StatusOK
	if refuse {
		status = http.StatusTooManyRequests
		h.Set("Retry-After", "3600")
	}
	return &http.Response{StatusCode: status, Header: h, Body: http.NoBody, Request: r}, nil
}

func (s *orderServer) sent() ([]string, []time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.callers), slices.Clone(s.at)
}

// While a key is cut (its server asked for an hour, the hold cut to 2s),
// the probes go in the order the requests arrived: each probe's answer
// renews the cut, and the next probe, once that hold has passed, is the
// request that has waited longest, not whichever wakes first, nor one that
// arrived during the hold. Here (no pacing, every probe answered 1s after
// it left, refused for the hour, until the last) requests c0 to c7 arrive
// 700ms apart from 2.1s on, while the first probe is out or a renewed hold
// runs: the server must see them in that order.
func TestProbesGoInArrivalOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 8
		srv := &orderServer{latency: time.Second, refusals: n}
		const url = "http://api.example/"
		tr := refusedFirst(t, srv, url)
		time.Sleep(2 * time.Second) // the cut hold has passed
		var wg sync.WaitGroup
		wg.Go(func() { _ = roundTrip(context.Background(), tr, url, "probe") })
		synctest.Wait()
		time.Sleep(100 * time.Millisecond)
		want := []string{"first", "probe"}
		for i := range n {
			name := fmt.Sprintf("c%d", i)
			want = append(want, name)
			goRoundTrip(t, &wg, tr, url, name)
			time.Sleep(700 * time.Millisecond)
		}
		wg.Wait()
		wantSent(t, srv, want)
	})
}

// With pacing, the requests the probe's answer lets go keep their places:
// those that waited for it (their turns passed meanwhile) go before the
// requests that arrived after them, whose turns had not come yet, and in
// the order they arrived, not in the order they wake. Here (1 request a
// second) the probe leaves at 2s and is answered with a 200 at 6.5s;
// requests a1 to a8 arrive 100ms apart from 2.1s on and have turns at 3s to
// 10s: a1 to a4 wait for the answer at theirs, a5 to a8 are still queued
// when it comes. The server must see a1 to a8 in that order, at 7s to 14s:
// a1 to a4 take the turns of a5 to a8, who take the next four, no turn
// lost.
func TestProbeAnswerKeepsArrivalOrder(t *testing.T) {
	defer client.CheckLines(func(s string) { t.Error(s) })()
	synctest.Test(t, func(t *testing.T) {
		const n = 8
		start := time.Now()
		srv := &orderServer{latency: 4500 * time.Millisecond}
		tr, err := client.New(srv, client.WithRate(1, time.Second), client.WithMaxRetryAfter(2*time.Second), client.WithMaxWait(time.Minute), client.WithRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		const url = "http://api.example/"
		if err := roundTrip(context.Background(), tr, url, "first"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // the cut hold has passed
		var wg sync.WaitGroup
		wg.Go(func() { _ = roundTrip(context.Background(), tr, url, "probe") })
		synctest.Wait()
		srv.mu.Lock()
		srv.latency = 0
		srv.mu.Unlock()
		want := []string{"first", "probe"}
		for i := range n {
			time.Sleep(100 * time.Millisecond)
			name := fmt.Sprintf("a%d", i+1)
			want = append(want, name)
			goRoundTrip(t, &wg, tr, url, name)
			synctest.Wait()
		}
		wg.Wait()
		got, at := srv.sent()
		if !slices.Equal(got, want) {
			t.Errorf("the server received %v, want %v: the requests the probe's answer let go lost their places", got, want)
		}
		for i, at := range at {
			want := time.Duration(5+i) * time.Second // a1 (i = 2) at 7s
			switch i {
			case 0:
				want = 0
			case 1:
				want = 2 * time.Second
			}
			if got := at.Sub(start); got != want {
				t.Errorf("request %d sent at %v, want %v", i, got, want)
			}
		}
	})
}

// The first probe after a cut hold is the request that arrived first
// among those asleep on the hold, not whichever wakes first when it ends;
// the others follow, each a probe in turn, in the order they arrived. Here
// (no pacing) the first request is refused for the hour, the hold cut to
// 2s, and c0 to c7 arrive during it, 100ms apart; every probe is answered
// 1s after it left with another refusal for the hour, but the last.
func TestFirstProbeIsFirstToArrive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 8
		srv := &orderServer{latency: time.Second, refusals: n - 1}
		const url = "http://api.example/"
		tr := refusedFirst(t, srv, url)
		var wg sync.WaitGroup
		want := []string{"first"}
		for i := range n {
			time.Sleep(100 * time.Millisecond)
			name := fmt.Sprintf("c%d", i)
			want = append(want, name)
			goRoundTrip(t, &wg, tr, url, name)
		}
		wg.Wait()
		wantSent(t, srv, want)
	})
}

// With pacing, the requests the probe's answer lets go keep their order
// when that answer holds them (a refusal with a Retry-After the Transport
// honours: the key is no longer cut), and they wait for its end at the
// gate: they take their new turns in the order they arrived, not in the
// order they woke. Here (1 request a second) the probe leaves at 2s and is
// refused at 6.5s for 1s; a1 to a4, arrived 100ms apart from 2.1s on, wait
// for its answer at their turns (3s to 6s), and no request is queued when
// it comes: they must go at 7.5s to 10.5s, in that order.
func TestProbeAnswerHoldKeepsArrivalOrder(t *testing.T) {
	defer client.CheckLines(func(s string) { t.Error(s) })()
	synctest.Test(t, func(t *testing.T) {
		const n = 4
		start := time.Now()
		var mu sync.Mutex
		var got []string
		var at []time.Duration
		next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			who := r.Header.Get("X-Caller")
			mu.Lock()
			got = append(got, who)
			at = append(at, time.Since(start))
			mu.Unlock()
			h := http.Header{}
			status := http.StatusOK
			switch who {
			case "first":
				status = http.StatusTooManyRequests
				h.Set("Retry-After", "3600")
			case "probe":
				time.Sleep(4500 * time.Millisecond)
				status = http.StatusTooManyRequests
				h.Set("Retry-After", "1")
			}
			return &http.Response{StatusCode: status, Header: h, Body: http.NoBody, Request: r}, nil
		})
		tr, err := client.New(next, client.WithRate(1, time.Second), client.WithMaxRetryAfter(2*time.Second), client.WithMaxWait(time.Minute), client.WithRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		const url = "http://api.example/"
		if err := roundTrip(context.Background(), tr, url, "first"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // the cut hold has passed
		var wg sync.WaitGroup
		wg.Go(func() { _ = roundTrip(context.Background(), tr, url, "probe") })
		synctest.Wait()
		want := []string{"first", "probe"}
		wantAt := []time.Duration{0, 2 * time.Second}
		for i := range n {
			time.Sleep(100 * time.Millisecond)
			name := fmt.Sprintf("a%d", i+1)
			want = append(want, name)
			wantAt = append(wantAt, 7500*time.Millisecond+time.Duration(i)*time.Second)
			goRoundTrip(t, &wg, tr, url, name)
			synctest.Wait()
		}
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(got, want) || !slices.Equal(at, wantAt) {
			t.Errorf("the server received %v at %v, want %v at %v", got, at, want, wantAt)
		}
	})
}

// A request whose place at the gate a retry that arrived before it took
// (its ticket no longer first) while it was on its way to its role, and
// that waits for the probe's answer there, gives that place up: when the
// answer holds the key and lets it go, it waits for that hold as any
// request does, not behind the place it gave up, which no request ahead
// of it will ever free. Here (no pacing) r leaves at 0s and is answered
// 2.2s later with a 503; the first request is refused for the hour at 0s,
// the hold cut to 2s; p and a arrive during it. At 2s p goes as the probe
// (answered at 3s with a Retry-After of 1s) and a is on its way to its
// role until 2.5s, when it waits for p's answer; r's retry comes to the
// gate meanwhile, ahead of a, and is on its way to its role until 2.8s.
// Every request must be admitted by 4s. Before, a was stranded at 4s in
// ticket.wait on the place it had given up (TestProbeStress caught it about
// one run in 13).
func TestWaiterPassedAtTheGateIsNotStranded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var mu sync.Mutex
		var got []string
		var at []time.Duration
		tries := map[string]int{}
		next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			who := r.Header.Get("X-Caller")
			mu.Lock()
			got = append(got, who)
			at = append(at, time.Since(start))
			tries[who]++
			try := tries[who]
			mu.Unlock()
			h := http.Header{}
			status := http.StatusOK
			switch {
			case who == "r" && try == 1:
				time.Sleep(2200 * time.Millisecond)
				status = http.StatusServiceUnavailable
			case who == "first":
				status = http.StatusTooManyRequests
				h.Set("Retry-After", "3600")
			case who == "p" && try == 1:
				time.Sleep(time.Second)
				status = http.StatusTooManyRequests
				h.Set("Retry-After", "1")
			}
			return &http.Response{StatusCode: status, Header: h, Body: http.NoBody, Request: r}, nil
		})
		// a (the second to take its role) and r's retry (the third) are
		// held on their way to their roles, the time it takes for another
		// request to pass them at the gate.
		var roles atomic.Int64
		defer client.BeforeProbeEnter(func() {
			switch roles.Add(1) {
			case 2, 3:
				time.Sleep(500 * time.Millisecond)
			}
		})()
		tr, err := client.New(next, client.WithMaxRetryAfter(2*time.Second), client.WithMaxWait(time.Minute),
			client.WithRetries(1), client.WithBackoff(100*time.Millisecond, 100*time.Millisecond), client.WithRandom(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		const url = "http://api.example/"
		// Every caller is done by 4s; their contexts end at 30s, so that
		// one stranded fails rather than block the bubble.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		call := func(name string) {
			wg.Go(func() {
				if err := roundTrip(ctx, tr, url, name); err != nil {
					t.Errorf("%s: %v at %v", name, err, time.Since(start))
				}
			})
			synctest.Wait()
		}
		call("r")
		call("first")
		time.Sleep(100 * time.Millisecond)
		call("p")
		time.Sleep(100 * time.Millisecond)
		call("a")
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		if end := at[len(at)-1]; end > 4*time.Second {
			t.Errorf("the server received %v at %v: the last after 4s", got, at)
		}
	})
}

// A retry that waits for a hold while its key is cut takes its place at
// the gate by its request's arrival: ahead of the requests that arrived
// after its request, even those already at the gate (as among the
// requests waiting for a probe's answer). Here (no pacing) r leaves at 0s
// and is refused at 1s for 1s; the first request, refused for the hour at
// 0s, cut the key's hold to 2s, and a and b wait at the gate since 100ms
// and 200ms. At 2s r's retry goes as the probe, refused for the hour at
// 3s; then a, at 5s, admitted at 6s; then b. Before (a retry placed
// behind the requests at the gate), a went as the probe at 2s and r's
// retry was the next.
func TestRetryTakesItsRequestsPlaceAtTheGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var mu sync.Mutex
		var got []string
		var at []time.Duration
		next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			who := r.Header.Get("X-Caller")
			mu.Lock()
			got = append(got, who)
			at = append(at, time.Since(start))
			n := len(got)
			mu.Unlock()
			h := http.Header{}
			status := http.StatusOK
			switch {
			case n == 1: // r
				time.Sleep(time.Second)
				status = http.StatusTooManyRequests
				h.Set("Retry-After", "1")
			case n == 2: // first
				status = http.StatusTooManyRequests
				h.Set("Retry-After", "3600")
			case n == 3: // the first probe
				time.Sleep(time.Second)
				status = http.StatusTooManyRequests
				h.Set("Retry-After", "3600")
			default:
				time.Sleep(time.Second)
			}
			return &http.Response{StatusCode: status, Header: h, Body: http.NoBody, Request: r}, nil
		})
		tr, err := client.New(next, client.WithMaxRetryAfter(2*time.Second), client.WithMaxWait(time.Minute), client.WithRetries(1))
		if err != nil {
			t.Fatal(err)
		}
		const url = "http://api.example/"
		var wg sync.WaitGroup
		call := func(name string) {
			wg.Go(func() { _ = roundTrip(context.Background(), tr, url, name) })
			synctest.Wait()
		}
		call("r")
		call("first")
		time.Sleep(100 * time.Millisecond)
		call("a")
		time.Sleep(100 * time.Millisecond)
		call("b")
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		want := []string{"r", "first", "r", "a", "b"}
		wantAt := []time.Duration{0, 0, 2 * time.Second, 5 * time.Second, 6 * time.Second}
		if !slices.Equal(got, want) || !slices.Equal(at, wantAt) {
			t.Errorf("the server received %v at %v, want %v at %v", got, at, want, wantAt)
		}
	})
}

// goRoundTrip sends name's GET to url through tr in a goroutine of wg,
// failing t if it fails.
func goRoundTrip(t *testing.T, wg *sync.WaitGroup, tr http.RoundTripper, url, name string) {
	wg.Go(func() {
		if err := roundTrip(context.Background(), tr, url, name); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	})
}

// refusedFirst returns a Transport to srv without pacing, whose Retry-After
// holds are cut to 2s (a request waits up to 10 minutes, and is not
// retried), after sending it the request "first" to url, which srv refuses
// for the hour: the key is cut from then on.
func refusedFirst(t *testing.T, srv *orderServer, url string) http.RoundTripper {
	t.Helper()
	tr, err := client.New(srv, client.WithMaxRetryAfter(2*time.Second), client.WithMaxWait(10*time.Minute), client.WithRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(context.Background(), tr, url, "first"); err != nil {
		t.Fatal(err)
	}
	return tr
}

// wantSent checks that srv received the callers of want, in that order.
func wantSent(t *testing.T, srv *orderServer, want []string) {
	t.Helper()
	if got, _ := srv.sent(); !slices.Equal(got, want) {
		t.Errorf("the server received %v, want %v: the probes did not go in arrival order", got, want)
	}
}
