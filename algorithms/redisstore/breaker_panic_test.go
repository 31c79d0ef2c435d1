package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// panicHook fails the script calls on a key of client key "{fail}" and
// panics in those on "{boom}", as a client's hook (tracing, metrics) with
// a bug does.
type panicHook struct{ redistest.PassHooks }

func (panicHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if args := cmd.Args(); cmd.Name() == "fcall" && len(args) > 3 {
			key, _ := args[3].(string)
			if strings.Contains(key, "{fail}") {
				err := errors.New("ERR injected failure")
				cmd.SetErr(err)
				return err
			}
			if strings.Contains(key, "{boom}") {
				panic("hook bug")
			}
		}
		return next(ctx, cmd)
	}
}

// panicBreakerStore returns a store whose client panics on a key holding
// "{boom}" (panicHook), with a threshold-1 breaker cooling down 10s, on
// the returned clock.
func panicBreakerStore(t *testing.T) (*redisstore.Store, *manualClock) {
	t.Helper()
	client := redis.NewClient(&redis.Options{Addr: sharedServer(t).Addr, MaxRetries: -1})
	t.Cleanup(func() { _ = client.Close() })
	client.AddHook(panicHook{})
	clk := &manualClock{t: time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)}
	s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)), redisstore.WithClock(clk), redisstore.WithCircuitBreaker(1, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return s, clk
}

// TestBreakerProbePanics: a half-open probe whose call panics (here in a
// client hook: on a client that does not bound its I/O by the context,
// in the goroutine the call runs in under the store's default timeout,
// and handed to the caller's) says nothing of Redis; the next call
// probes, and its success
// closes the circuit. The panic left the probe marked in flight for good:
// every later call got ErrCircuitOpen, whatever the clock, and the store
// never called Redis again.
func TestBreakerProbePanics(t *testing.T) {
	s, clk := panicBreakerStore(t)
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 100, Window: time.Hour}
	take := func(key string) error {
		_, err := s.Take(context.Background(), algorithms.Check{Spec: spec, Key: key})
		return err
	}
	if err := take("fail"); err == nil || errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Fatalf("failing Take = %v, want the Redis error", err)
	}
	if err := take("other"); !errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Fatalf("after the failure, Take = %v, want ErrCircuitOpen", err)
	}
	clk.t = clk.t.Add(10 * time.Second)
	func() {
		defer func() {
			if p := recover(); p != "hook bug" {
				t.Fatalf("the probe's Take recovered %v, want the hook's panic", p)
			}
		}()
		_ = take("boom")
	}()
	for i, wait := range []time.Duration{0, time.Hour} {
		clk.t = clk.t.Add(wait)
		if err := take("other"); err != nil {
			t.Errorf("call %d after the probe panicked (%s later): Take = %v, want it to probe Redis and close the circuit", i, wait, err)
		}
	}
}

// TestBreakerRefundProbePanics: a Refund goes through the breaker as a
// Take does (give), and when it is the half-open probe and panics in a
// client hook, the next call probes (WithCircuitBreaker: a call that
// panics does not count, and a probe that ends so lets the next call
// probe).
func TestBreakerRefundProbePanics(t *testing.T) {
	s, clk := panicBreakerStore(t)
	spec := algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 10, Window: time.Second, MaxDelay: time.Second}
	ctx := context.Background()
	ds, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "boom-free"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "fail"}); err == nil || errors.Is(err, redisstore.ErrCircuitOpen) {
		t.Fatalf("failing Take = %v, want the Redis error", err)
	}
	clk.t = clk.t.Add(10 * time.Second)
	func() {
		defer func() {
			if p := recover(); p != "hook bug" {
				t.Fatalf("the probe's Refund recovered %v, want the hook's panic", p)
			}
		}()
		_ = s.Refund(ctx, make([]algorithms.Refunded, 1), []algorithms.Check{{Spec: spec, Key: "boom"}}, ds, 0)
	}()
	if _, err := s.Take(ctx, algorithms.Check{Spec: spec, Key: "other"}); err != nil {
		t.Errorf("after the probing Refund panicked: Take = %v, want it to probe Redis and close the circuit", err)
	}
}
