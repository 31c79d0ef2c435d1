package client_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
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
		tr, err := client.New(srv, client.WithMaxRetryAfter(2*time.Second), client.WithMaxWait(10*time.Minute), client.WithRetries(0))
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
		time.Sleep(100 * time.Millisecond)
		want := []string{"first", "probe"}
		for i := range n {
			name := fmt.Sprintf("c%d", i)
			want = append(want, name)
			wg.Go(func() {
				if err := roundTrip(context.Background(), tr, url, name); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			})
			time.Sleep(700 * time.Millisecond)
		}
		wg.Wait()
		if got, _ := srv.sent(); !slices.Equal(got, want) {
			t.Errorf("the server received %v, want %v: the probes did not go in arrival order", got, want)
		}
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
			wg.Go(func() {
				if err := roundTrip(context.Background(), tr, url, name); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			})
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
