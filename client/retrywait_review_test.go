package client_test

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// A refusal's Retry-After shorter than a hold its key is under already
// (another response's RateLimit fields, read while the refused request was
// on its way) does not shorten that hold: the retry waits for it, as every
// request of the key does. WithOnRetry's Retry.Wait says how long the
// Transport waits before the next attempt, so it is that hold, not the
// Retry-After alone (which the hook was told before, while the retry went
// 45 seconds later).
func TestRetryWaitIsTheKeysHold(t *testing.T) {
	clock := newAutoClock()
	aIn, bIn, aDone := make(chan struct{}), make(chan struct{}), make(chan struct{})
	srv := newStub(t, clock, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 1: // A: answered once B is on its way, with no quota left for 50s
			close(aIn)
			if _, ok := hangguard.Within(bIn, waitBound); !ok {
				t.Error("B never reached the server")
			}
			w.Header().Set("RateLimit", `"default";r=0;t=50`)
			w.Write([]byte("ok"))
		case 2: // B: refused once A's answer has been read
			close(bIn)
			if _, ok := hangguard.Within(aDone, waitBound); !ok {
				t.Error("A never returned")
			}
			w.Header().Set("Retry-After", "5")
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			w.Write([]byte("ok"))
		}
	})
	var mu sync.Mutex
	var retries []client.Retry
	hc, _ := newClient(t, clock, client.WithOnRetry(func(r client.Retry) {
		mu.Lock()
		retries = append(retries, r)
		mu.Unlock()
	}))
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, _, err := get(hc, srv.URL); err != nil {
			t.Error(err)
		}
		close(aDone)
	})
	wg.Go(func() {
		// A must be at the server first: it is request 1.
		if _, ok := hangguard.Within(aIn, waitBound); !ok {
			t.Error("A never reached the server")
			return
		}
		if status, _, err := get(hc, srv.URL); err != nil || status != 200 {
			t.Errorf("B: got %d %v, want its retry's 200", status, err)
		}
	})
	wg.Wait()
	if at, want := srv.arrivals(), []time.Duration{0, 0, 50 * time.Second}; !slices.Equal(at, want) {
		t.Errorf("arrivals %v, want %v", at, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(retries) != 1 || retries[0].Wait != 50*time.Second || !retries[0].RetryAfter {
		t.Errorf("retries %+v, want one told of the 50s hold it waits for", retries)
	}
}
