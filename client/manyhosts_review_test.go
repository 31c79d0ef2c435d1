package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// Many goroutines on many hosts (or on two) at once, with proactive pacing
// or without, in virtual time (a synctest
// bubble: the Transport's default clock and the contexts' deadlines are
// the bubble's): servers that refuse at random, with a Retry-After, or a
// RateLimit field saying no quota is left, or nothing; callers that cancel
// or have deadlines. Every call returns, with a response whose body reads
// or an error of the documented kinds; every host is paced (no two of its
// requests closer than the interval); every response body is closed, and
// no goroutine is left behind once the calls have returned.
func TestManyHostsManyCallers(t *testing.T) {
	for seed := range uint64(12) {
		hosts := []int{40, 2}[seed%2] // many hosts, or two much contended
		proactive := seed%3 != 2      // and some runs without proactive pacing
		t.Run(fmt.Sprintf("seed %d, %d hosts, proactive %v", seed, hosts, proactive), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { manyHosts(t, seed, hosts, proactive) })
		})
	}
}

func manyHosts(t *testing.T, seed uint64, hosts int, proactive bool) {
	const (
		callers  = 400
		interval = 100 * time.Millisecond
	)
	var mu sync.Mutex
	rnd := rand.New(rand.NewPCG(seed, 1))
	sent := map[string][]time.Time{}
	var opened, closed int
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		defer mu.Unlock()
		sent[r.URL.Host] = append(sent[r.URL.Host], time.Now())
		h := http.Header{}
		status := http.StatusOK
		switch x := rnd.IntN(10); {
		case x == 0:
			status = http.StatusTooManyRequests
			h.Set("Retry-After", fmt.Sprint(rnd.IntN(3)))
		case x == 1:
			status = http.StatusServiceUnavailable
		case x == 2:
			h.Set("RateLimit", fmt.Sprintf(`"default";r=0;t=%d`, rnd.IntN(3)))
		case x == 3:
			status = http.StatusTooManyRequests
			h.Set("Retry-After", "120") // beyond the cap: given up on, and the host cut
		}
		opened++
		body := &countedBody{Reader: strings.NewReader("answer"), closed: &closed, mu: &mu}
		return &http.Response{StatusCode: status, Header: h, Body: body, Request: r}, nil
	})
	tr, err := client.New(next, client.WithRate(1, interval), client.WithMaxWait(5*time.Second),
		client.WithMaxRetryAfter(time.Minute), client.WithRandom(rand.NewPCG(seed, 2)), client.WithProactive(proactive))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var failures sync.Map
	for i := range callers {
		mu.Lock()
		host := fmt.Sprintf("h%d.example", rnd.IntN(hosts))
		cancelAfter := time.Duration(-1)
		deadline := time.Duration(-1)
		switch rnd.IntN(4) {
		case 0:
			cancelAfter = time.Duration(rnd.IntN(3000)) * time.Millisecond
		case 1:
			deadline = time.Duration(rnd.IntN(3000)) * time.Millisecond
		}
		start := time.Duration(rnd.IntN(2000)) * time.Millisecond
		mu.Unlock()
		wg.Go(func() {
			time.Sleep(start) // virtual time, in the bubble: arrivals spread over 2s
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if deadline >= 0 {
				var c2 context.CancelFunc
				ctx, c2 = context.WithTimeout(ctx, deadline)
				defer c2()
			}
			if cancelAfter >= 0 {
				timer := time.AfterFunc(cancelAfter, cancel)
				defer timer.Stop()
			}
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+"/", nil)
			resp, err := tr.RoundTrip(req)
			switch {
			case err == nil:
				b, rerr := io.ReadAll(resp.Body)
				resp.Body.Close()
				if rerr != nil || string(b) != "answer" {
					failures.Store(i, fmt.Sprintf("caller %d: body %q, %v", i, b, rerr))
				}
			case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			default:
				var we *client.WaitError
				if !errors.As(err, &we) {
					failures.Store(i, fmt.Sprintf("caller %d: %v", i, err))
				}
			}
		})
	}
	wg.Wait()
	failures.Range(func(_, v any) bool { t.Error(v); return true })
	mu.Lock()
	defer mu.Unlock()
	for host, at := range sent {
		for i := 1; i < len(at); i++ {
			if d := at[i].Sub(at[i-1]); d < interval {
				t.Errorf("%s: requests %d and %d sent %v apart, want %v at least", host, i-1, i, d, interval)
			}
		}
	}
	if opened != closed {
		t.Errorf("%d response bodies opened, %d closed", opened, closed)
	}
	if keys := tr.ProbesOut(); len(keys) > 0 {
		t.Errorf("probes still out for %v", slices.Sorted(slices.Values(keys)))
	}
	// No goroutine is left behind: synctest.Test fails when one of the
	// bubble is still blocked as this function returns.
}

type countedBody struct {
	*strings.Reader
	mu     *sync.Mutex
	closed *int
	once   sync.Once
}

func (b *countedBody) Close() error {
	b.once.Do(func() {
		b.mu.Lock()
		*b.closed++
		b.mu.Unlock()
	})
	return nil
}
