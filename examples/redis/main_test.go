package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/redis/go-redis/v9"
)

// startInstances serves instances "a" and "b", each with its own client
// of the Redis at addr, and returns their URLs. They are the example's:
// its client's 100ms timeouts and its store's 250ms timeout.
func startInstances(t *testing.T, addr string) []string {
	t.Helper()
	return serveInstances(t, addr, false)
}

// patientTimeout is the timeout of the clients and stores of
// startPatientInstances: one a loaded machine cannot reach.
const patientTimeout = 10 * time.Second

// startPatientInstances is startInstances with every timeout of the
// clients (dial, read, write) and of the stores lengthened to
// patientTimeout, for a test of what Redis answers: on a loaded machine
// under -race, a call can outlast the example's timeouts (the first
// Take, which also loads the library, once took 252ms), and the
// middleware then lets the request through uncounted (fail open), or the
// client sends again a call Redis may have run. The example's own
// timeouts are tested by TestRedisDownFailsOpenPromptly.
func startPatientInstances(t *testing.T, addr string) []string {
	t.Helper()
	return serveInstances(t, addr, true)
}

func serveInstances(t *testing.T, addr string, patient bool) []string {
	t.Helper()
	var urls []string
	for _, name := range []string{"a", "b"} {
		opt := clientOptions(addr)
		var opts []redisstore.Option
		if patient {
			opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = patientTimeout, patientTimeout, patientTimeout
			opts = append(opts, redisstore.WithTimeout(patientTimeout))
		}
		client := redis.NewClient(opt)
		t.Cleanup(func() { _ = client.Close() })
		h, store, err := newInstance(name, client, nil, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = store.Close() }) // before the client's
		hs := httptest.NewServer(h)
		t.Cleanup(hs.Close)
		urls = append(urls, hs.URL)
	}
	return urls
}

// TestTwoInstancesOneLimit runs both instances against a redis-server the
// test starts, and alternates between them: 5 requests pass in all, then
// both answer 429. Its instances wait for Redis as long as it takes
// (startPatientInstances): a call cut short by the example's timeouts
// would let a request through uncounted.
func TestTwoInstancesOneLimit(t *testing.T) {
	srv := redistest.New(t)
	urls := startPatientInstances(t, srv.Addr)
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

// callCounter is a go-redis hook counting the commands and pipelines a
// client is asked to send, whether or not Redis answers.
type callCounter struct{ n atomic.Int64 }

func (c *callCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *callCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *callCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmds)
	}
}

// TestRedisDownBreakerOpens: as the README says, with Redis stopped an
// instance lets requests through, and after 5 failures in a row it stops
// calling Redis (for 5 s: the middleware's default circuit breaker, and the
// store's own) and lets the next requests through without asking it.
func TestRedisDownBreakerOpens(t *testing.T) {
	srv := redistest.New(t)
	client := redis.NewClient(clientOptions(srv.Addr))
	t.Cleanup(func() { _ = client.Close() })
	calls := new(callCounter)
	client.AddHook(calls)
	h, store, err := newInstance("a", client, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	get := func(what string) {
		t.Helper()
		resp, err := hs.Client().Get(hs.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d, want 200", what, resp.StatusCode)
		}
	}
	get("with Redis up")
	_ = srv.Stop()
	for i := range 5 {
		before := calls.n.Load()
		get(fmt.Sprintf("failure %d with Redis down", i+1))
		if calls.n.Load() == before {
			t.Fatalf("request %d with Redis down: Redis not called, want a call (the breaker opens after 5 failures)", i+1)
		}
	}
	for i := range 3 {
		before := calls.n.Load()
		get(fmt.Sprintf("request %d after 5 failures", i+1))
		if n := calls.n.Load() - before; n != 0 {
			t.Errorf("request %d after 5 failures in a row: %d calls to Redis, want none (the circuit breaker open for 5 s)", i+1, n)
		}
	}
}

// TestRedisBackLimitHolds: as the README says, Redis started again after
// the circuit breaker opened, the instance lets requests through without
// asking it until the breaker's 5 s are up (on the instance's clock, here
// a manual one), and then the limit holds again: 5 a minute, the sixth
// refused with Retry-After.
func TestRedisBackLimitHolds(t *testing.T) {
	srv := redistest.New(t)
	client := redis.NewClient(clientOptions(srv.Addr))
	t.Cleanup(func() { _ = client.Close() })
	calls := new(callCounter)
	client.AddHook(calls)
	clock := algotest.NewClock(time.Unix(1_700_000_040, 0))
	h, store, err := newInstance("a", client, clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	get := func() *http.Response {
		t.Helper()
		resp, err := hs.Client().Get(hs.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	_ = srv.Stop()
	for i := range 5 {
		if resp := get(); resp.StatusCode != 200 {
			t.Fatalf("failure %d with Redis down: status %d, want 200 (fail open)", i+1, resp.StatusCode)
		}
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	clock.Advance(5*time.Second - time.Millisecond)
	before := calls.n.Load()
	if resp := get(); resp.StatusCode != 200 || calls.n.Load() != before {
		t.Fatalf("Redis back, 1ms before the breaker's 5 s are up: status %d after %d calls to Redis, want 200 after none", resp.StatusCode, calls.n.Load()-before)
	}
	clock.Advance(time.Millisecond)
	var codes []int
	for range 6 {
		resp := get()
		codes = append(codes, resp.StatusCode)
		if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
			t.Errorf("a 429 without Retry-After")
		}
	}
	if want := []int{200, 200, 200, 200, 200, 429}; !slices.Equal(codes, want) {
		t.Errorf("the breaker's 5 s up, Redis back: statuses %v, want %v (the limit holds again)", codes, want)
	}
}
