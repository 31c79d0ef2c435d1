package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// startInstances serves instances "a" and "b", each with its own client
// of the Redis at addr, and returns their URLs.
func startInstances(t *testing.T, addr string) []string {
	t.Helper()
	var urls []string
	for _, name := range []string{"a", "b"} {
		client := newClient(addr)
		t.Cleanup(func() { _ = client.Close() })
		h, err := newInstance(name, client)
		if err != nil {
			t.Fatal(err)
		}
		hs := httptest.NewServer(h)
		t.Cleanup(hs.Close)
		urls = append(urls, hs.URL)
	}
	return urls
}

// TestTwoInstancesOneLimit runs both instances against a redis-server the
// test starts, and alternates between them: 5 requests pass in all, then
// both answer 429.
func TestTwoInstancesOneLimit(t *testing.T) {
	srv := redistest.New(t)
	urls := startInstances(t, srv.Addr)
	served := map[string]int{}
	var codes []int
	for i := range 8 {
		resp, err := http.Get(urls[i%2] + "/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
		if resp.StatusCode == 200 {
			served[strings.TrimSpace(string(body))]++
		}
		// The README: the rest answer 429 "with Retry-After": whole
		// seconds, at least 1, and within the sliding window's reach of
		// two minutes (here 72 s less the time into the current minute).
		if ra := resp.Header.Get("Retry-After"); resp.StatusCode == 429 {
			if secs, err := strconv.Atoi(ra); err != nil || secs < 1 || secs > 120 {
				t.Fatalf("request %d: 429 with Retry-After %q, want 1 to 120 seconds", i, ra)
			}
		} else if ra != "" {
			t.Fatalf("request %d: %d with Retry-After %q, want none", i, resp.StatusCode, ra)
		}
	}
	want := []int{200, 200, 200, 200, 200, 429, 429, 429}
	for i := range want {
		if codes[i] != want[i] {
			t.Fatalf("status codes alternating between the instances = %v, want %v", codes, want)
		}
	}
	if served["hello from instance a"] != 3 || served["hello from instance b"] != 2 {
		t.Fatalf("served %v, want 3 by a and 2 by b", served)
	}
}

// TestRedisDownFailsOpenPromptly: with Redis stopped, both instances keep
// serving (the middleware fails open) and no request waits long for the
// dead Redis, even before the circuit breakers open.
func TestRedisDownFailsOpenPromptly(t *testing.T) {
	srv := redistest.New(t)
	urls := startInstances(t, srv.Addr)
	get := func(url string) (int, error) {
		resp, err := http.Get(url + "/")
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	for _, u := range urls {
		code, err := get(u)
		if err != nil {
			t.Fatal(err)
		}
		if code != 200 {
			t.Fatalf("with Redis up: status %d, want 200", code)
		}
	}
	_ = srv.Stop()
	type reply struct {
		code int
		err  error
	}
	for i := range 8 {
		// The store's timeout is 250ms. Without it (WithTimeout left out,
		// the store's default of 2s, or WithTimeout(0)) a request waits
		// out go-redis's dial retries, 1.7s. The bound counts the test
		// process's running time (hangguard), which serves the requests
		// too, not the wall's, which a process starved by a loaded
		// machine can overrun (820ms seen at a load of 8 on 2 CPUs).
		const bound = 1200 * time.Millisecond
		done := make(chan reply, 1)
		start := time.Now()
		go func() {
			code, err := get(urls[i%2])
			done <- reply{code, err}
		}()
		r, ok := hangguard.Within(done, bound)
		if !ok {
			t.Fatalf("request %d with Redis down had no answer after %s of the test's running time, want a prompt failure (the store's 250ms timeout)", i, bound)
		}
		if took := time.Since(start); took > bound {
			t.Logf("request %d with Redis down was answered after %s on the wall clock, within %s of the test's running time", i, took, bound)
		}
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.code != 200 {
			t.Fatalf("request %d with Redis down: status %d, want 200 (fail open)", i, r.code)
		}
	}
}
