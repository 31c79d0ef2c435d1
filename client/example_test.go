package client_test

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/client"
)

// A third-party API allows 5 requests per second and has just turned us away
// once. The transport waits out its Retry-After, then sends one request
// every 200ms.
func ExampleNew() {
	clock := algotest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	start := clock.Now()
	var calls atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		fmt.Fprintf(w, "quote %d", calls.Load())
	}))
	defer api.Close()

	tr, err := client.New(nil,
		client.WithRate(5, time.Second),
		client.WithMaxWait(10*time.Second),
		client.WithClock(clock),
		client.WithOnRetry(func(r client.Retry) {
			fmt.Printf("%d, retrying in %s\n", r.Status, r.Wait)
		}))
	if err != nil {
		fmt.Println(err)
		return
	}
	hc := &http.Client{Transport: tr}
	for range 3 {
		resp, err := hc.Get(api.URL)
		if err != nil {
			fmt.Println(err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%s at +%s\n", body, clock.Now().Sub(start))
	}
	// Output:
	// 429, retrying in 2s
	// quote 2 at +2s
	// quote 3 at +2.2s
	// quote 4 at +2.4s
}

// When the server keeps refusing, the transport gives up after its retries;
// with WithGiveUpError the caller gets a *RetryError saying how many
// attempts were made and what the server last said.
func ExampleWithGiveUpError() {
	clock := algotest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer api.Close()

	tr, _ := client.New(nil, client.WithClock(clock), client.WithRetries(2), client.WithGiveUpError())
	_, err := (&http.Client{Transport: tr}).Get(api.URL)

	var re *client.RetryError
	if errors.As(err, &re) {
		fmt.Println(re.Attempts, re.LastStatus, errors.Is(err, client.ErrGaveUp))
	}
	fmt.Println(re)
	// Output:
	// 3 503 true
	// client: gave up after 3 attempts (retries exhausted): last status 503 Service Unavailable
}

// A request whose turn is further away than the maximum wait fails at once
// with a *WaitError, before anything is sent; with a maximum wait of 0 only
// requests that can leave at once are sent.
func ExampleWithMaxWait() {
	clock := algotest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer api.Close()

	tr, _ := client.New(nil, client.WithRate(1, 10*time.Second), client.WithMaxWait(0), client.WithClock(clock))
	hc := &http.Client{Transport: tr}
	for range 2 {
		resp, err := hc.Get(api.URL)
		var we *client.WaitError
		switch {
		case errors.As(err, &we):
			fmt.Printf("refused: would wait %s, max %s (ErrWaitTooLong: %v)\n", we.Wait, we.MaxWait, errors.Is(err, client.ErrWaitTooLong))
		case err != nil:
			fmt.Println(err)
		default:
			resp.Body.Close()
			fmt.Println(resp.Status)
		}
	}
	// Output:
	// 200 OK
	// refused: would wait 10s, max 0s (ErrWaitTooLong: true)
}
