package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// countHook counts the commands and pipelines a client sends, and records
// each pipeline's commands.
type countHook struct {
	mu        sync.Mutex
	cmds      []string
	pipelines int
	piped     [][]string // each pipeline's commands
}

func (h *countHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (h *countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.mu.Lock()
		h.cmds = append(h.cmds, cmd.Name())
		h.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (h *countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var names []string
		for _, c := range cmds {
			names = append(names, c.Name())
		}
		h.mu.Lock()
		h.pipelines++
		h.piped = append(h.piped, names)
		h.mu.Unlock()
		return next(ctx, cmds)
	}
}

func (h *countHook) reset() {
	h.mu.Lock()
	h.cmds, h.pipelines, h.piped = nil, 0, nil
	h.mu.Unlock()
}

// take returns the commands sent since the last reset or take, pipelined
// ones included, and forgets them.
func (h *countHook) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	sent := h.cmds
	for _, p := range h.piped {
		sent = append(sent, p...)
	}
	h.cmds, h.pipelines, h.piped = nil, 0, nil
	return sent
}

// pipelinedCommands returns the commands of each pipeline sent since the
// last reset.
func (h *countHook) pipelinedCommands() [][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([][]string(nil), h.piped...)
}

// everyKind returns one check of each kind, on distinct keys and on one key.
func everyKind(key string) []algorithms.Check {
	var cs []algorithms.Check
	for _, k := range algorithms.Kinds {
		s := algorithms.Spec{Algorithm: k, Limit: 5, Window: time.Second}
		switch k {
		case algorithms.SlidingBuckets:
			s.Buckets = 10
		case algorithms.LeakyQueue:
			s.MaxDelay = time.Second
		}
		cs = append(cs, algorithms.Check{Spec: s, Key: key})
	}
	return cs
}

// countedClient returns a new client of the shared server and the hook
// counting its commands.
func countedClient(t testing.TB) (*redis.Client, *countHook) {
	t.Helper()
	client, hook := newClient(t), &countHook{}
	client.AddHook(hook)
	return client, hook
}

// countedCluster returns the shared Cluster's client (see sharedCluster),
// a store on it under a prefix of its own, and a hook counting the
// client's commands from now on.
func countedCluster(t *testing.T) (*redis.ClusterClient, *redisstore.Store, *countHook) {
	t.Helper()
	client, hook := sharedCluster(t), &countHook{}
	client.AddHook(hook)
	s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	return client, s, hook
}

// eachRoundTripStore runs f, in a subtest each, on the stores whose
// commands TestOneRoundTripPerTake and TestPeekOneRoundTrip count: on the
// server's clock and on an injected one, through the function library
// and, as a user that may not use functions, the script fallback; want is
// the one command each call sends. Each store is under a prefix of its
// own, on a client of its own with hook counting its commands, and has
// loaded its code: the first call may load it (FCALL, FUNCTION LOAD,
// FCALL; or EVALSHA, NOSCRIPT, EVAL).
func eachRoundTripStore(t *testing.T, f func(t *testing.T, s *redisstore.Store, hook *countHook, want string)) {
	_ = noFunctionsClient(t) // creates the user "nofunctions"
	for _, tc := range []struct {
		name     string
		injected bool
		user     string
		want     string
	}{
		{"server_time", false, "", "fcall"},
		{"injected_clock", true, "", "fcall"},
		{"script_fallback", false, "nofunctions", "evalsha"},
		{"script_fallback_injected", true, "nofunctions", "evalsha"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := redis.NewClient(&redis.Options{Addr: sharedServer(t).Addr, Username: tc.user, Password: password(tc.user)})
			defer client.Close()
			hook := &countHook{}
			client.AddHook(hook)
			opts := []redisstore.Option{redisstore.WithPrefix(uniquePrefix(t))}
			if tc.injected {
				opts = append(opts, redisstore.WithClock(&manualClock{t: time.Unix(1_800_000_000, 0)}))
			}
			s, err := redisstore.New(client, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Take(context.Background(), everyKind("k")[0]); err != nil {
				t.Fatal(err)
			}
			hook.reset()
			f(t, s, hook, tc.want)
		})
	}
}

// wantOneCommandEach fails t unless hook saw calls commands, each want, and
// no pipeline; what names the calls.
func wantOneCommandEach(t *testing.T, hook *countHook, calls int, want, what string) {
	t.Helper()
	cmds, pipes := hook.snapshot()
	if len(cmds) != calls || pipes != 0 {
		t.Fatalf("%d %s sent %d commands %v and %d pipelines, want one command each", calls, what, len(cmds), cmds, pipes)
	}
	for _, c := range cmds {
		if c != want {
			t.Fatalf("%s sent %q, want %s (commands %v)", what, c, want, cmds)
		}
	}
}

func (h *countHook) snapshot() ([]string, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.cmds...), h.pipelines
}

// TestOneRoundTripPerTake counts, with a go-redis hook, the commands every
// Take sends: exactly one FCALL, however many checks, of whichever kinds,
// on the server's clock and on an injected one; and exactly one EVALSHA
// for a user that may not use functions (the script fallback).
func TestOneRoundTripPerTake(t *testing.T) {
	ctx := context.Background()
	eachRoundTripStore(t, func(t *testing.T, s *redisstore.Store, hook *countHook, want string) {
		all := everyKind("k")
		takes := 0
		for n := 1; n <= len(all); n++ {
			// The window kinds' checks judged at a lower limit
			// (Check.Limit), alone and after the same checks at their
			// Spec's (each key named twice: the general path).
			judged := judgedOf(all[:n], 3)
			for _, checks := range [][]algorithms.Check{all[:n], everyKind("other")[len(all)-n:], judged, append(judgedOf(all[:n], 2), all[:n]...)} {
				if _, err := s.Take(ctx, checks...); err != nil {
					t.Fatal(err)
				}
				takes++
			}
		}
		dst := make([]algorithms.Decision, 4)
		if err := s.TakeInto(ctx, dst, all[:4]); err != nil {
			t.Fatal(err)
		}
		takes++
		if err := s.TakeInto(ctx, dst, judgedOf(all[:4], 4)); err != nil {
			t.Fatal(err)
		}
		takes++
		wantOneCommandEach(t, hook, takes, want, "Takes")
	})
}

// TestFunctionFlushed: after FUNCTION FLUSH the store loads the library
// again and goes on deciding.
func TestFunctionFlushed(t *testing.T) {
	client := newClient(t)
	s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// A token bucket refilling 5 per day: nothing refills during the test.
	check := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 5, Window: 24 * time.Hour}, Key: "k"}
	for i := range 3 {
		if err := client.FunctionFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		d, err := s.Take(ctx, check)
		if err != nil {
			t.Fatalf("Take after FUNCTION FLUSH: %v", err)
		}
		if got, want := d[0].Remaining, int64(4-i); got != want {
			t.Fatalf("Take %d: Remaining = %d, want %d", i, got, want)
		}
	}
	lib, err := client.FunctionList(ctx, redis.FunctionListQuery{LibraryNamePattern: "ratekeeper_*"}).Result()
	if err != nil || len(lib) != 1 {
		t.Fatalf("FUNCTION LIST = %v, %v; want the one ratekeeper library", lib, err)
	}
}

// TestScriptFlushed: with the script fallback (a user that may not use
// functions), after SCRIPT FLUSH the store reloads the script (EVAL on
// NOSCRIPT) and goes on deciding.
func TestScriptFlushed(t *testing.T) {
	client := noFunctionsClient(t)
	ctx := context.Background()
	s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	// A token bucket refilling 5 per day: nothing refills during the test.
	check := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.TokenBucket, Limit: 5, Window: 24 * time.Hour}, Key: "k"}
	for i := range 3 {
		if err := client.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		d, err := s.Take(ctx, check)
		if err != nil {
			t.Fatalf("Take after SCRIPT FLUSH: %v", err)
		}
		if got, want := d[0].Remaining, int64(4-i); got != want {
			t.Fatalf("Take %d: Remaining = %d, want %d", i, got, want)
		}
	}
}

// TestOptionsValidated: bad configuration fails in New with an error naming
// the field.
func TestOptionsValidated(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer client.Close()
	for name, tc := range map[string]struct {
		opt  redisstore.Option
		want string
	}{
		"empty prefix":   {redisstore.WithPrefix(""), "Prefix"},
		"brace prefix":   {redisstore.WithPrefix("a{b"), "Prefix"},
		"nil clock":      {redisstore.WithClock(nil), "Clock"},
		"negative ttl":   {redisstore.WithMinTTL(-time.Second), "MinTTL"},
		"zero failures":  {redisstore.WithCircuitBreaker(0, time.Second), "Failures"},
		"zero cooldown":  {redisstore.WithCircuitBreaker(1, 0), "Cooldown"},
		"zero deny size": {redisstore.WithDenyCache(0), "Size"},
		"neg. timeout":   {redisstore.WithTimeout(-time.Nanosecond), "Timeout must not be negative"},
		"nil option":     {nil, "Option"},
	} {
		_, err := redisstore.New(client, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "redisstore: ") {
			t.Errorf("%s: New = %v, want a redisstore error naming %s", name, err, tc.want)
		}
	}
	if _, err := redisstore.New(nil); err == nil {
		t.Error("New(nil) succeeded")
	}
}

// TestOptionsLeastValid: the bounds the options' errors state are
// inclusive of the least valid value: a deny cache of Size 1 and a breaker
// opening after 1 failure ("at least 1"), a Cooldown of 1ns ("positive"),
// a MinTTL and a Timeout of 0 ("must not be negative"; a Timeout of 0 is
// none: TestWithTimeoutZeroMeansNone).
func TestOptionsLeastValid(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer client.Close()
	for name, opt := range map[string]redisstore.Option{
		"deny size 1":     redisstore.WithDenyCache(1),
		"failures 1":      redisstore.WithCircuitBreaker(1, time.Second),
		"cooldown 1ns":    redisstore.WithCircuitBreaker(3, time.Nanosecond),
		"timeout 0":       redisstore.WithTimeout(0),
		"min ttl 0":       redisstore.WithMinTTL(0),
		"one-byte prefix": redisstore.WithPrefix("p"),
	} {
		s, err := redisstore.New(client, opt)
		if err != nil {
			t.Errorf("%s: New = %v, want a store", name, err)
			continue
		}
		_ = s.Close()
	}
}

// TestClosedAndMismatched: a closed store returns ErrClosed without calling
// Redis; TakeInto wants one decision per check; invalid checks are the
// algorithms errors, before any call.
func TestClosedAndMismatched(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer client.Close()
	s, err := redisstore.New(client)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	check := everyKind("k")[0]
	if err := s.TakeInto(ctx, make([]algorithms.Decision, 2), []algorithms.Check{check}); err == nil {
		t.Error("TakeInto with 2 decisions for 1 check succeeded")
	}
	bad := check
	bad.Cost = 99
	if _, err := s.Take(ctx, check, bad); !errors.Is(err, algorithms.ErrInvalidCost) {
		t.Errorf("Take with cost 99 over capacity 5 = %v, want ErrInvalidCost", err)
	}
	bad = check
	bad.Spec.Limit = 0
	if _, err := s.Take(ctx, bad); !errors.Is(err, algorithms.ErrInvalidSpec) {
		t.Errorf("Take with Limit 0 = %v, want ErrInvalidSpec", err)
	}
	if d, err := s.Take(ctx); err != nil || len(d) != 0 {
		t.Errorf("Take() = %v, %v; want no decisions", d, err)
	}
	_ = s.Close()
	_ = s.Close()
	if _, err := s.Take(ctx, check); !errors.Is(err, algorithms.ErrClosed) {
		t.Errorf("Take after Close = %v, want ErrClosed", err)
	}
}

// password returns a password for user ("" for the default user): go-redis
// authenticates only with a non-empty one, and nopass users accept any.
func password(user string) string {
	if user == "" {
		return ""
	}
	return "any"
}

// TestRingRejected: a *redis.Ring sends a multi-key call to the shard of
// its first key, so a client key's state would live on whichever shard the
// Take's first check picked, and a limit could be exceeded (here: a limit
// of 1 admits twice). New refuses a Ring, naming the clients it supports.
func TestRingRejected(t *testing.T) {
	a, b := redistest.New(t), redistest.New(t)
	ring := redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": a.Addr, "b": b.Addr}})
	defer ring.Close()
	s, err := redisstore.New(ring)
	if err == nil {
		// Show what would go wrong: two keys on two shards.
		one := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1, Window: time.Hour}
		var k1, k2 string
		ctx := context.Background()
		for i := 0; k2 == ""; i++ {
			k := fmt.Sprintf("k%d", i)
			shardOf := func(key string) string {
				sh, err := ring.GetShardClientForKey("rk:{" + key + "}:x")
				if err != nil {
					t.Fatal(err)
				}
				return sh.Options().Addr
			}
			switch {
			case k1 == "":
				k1 = k
			case shardOf(k) != shardOf(k1):
				k2 = k
			}
		}
		d1, err1 := s.Take(ctx, algorithms.Check{Spec: one, Key: k1})
		d2, err2 := s.Take(ctx, algorithms.Check{Spec: one, Key: k2}, algorithms.Check{Spec: one, Key: k1})
		t.Fatalf("New(*redis.Ring) succeeded; Take(%s) = %+v, %v; then Take(%s, %s) = %+v, %v", k1, d1, err1, k2, k1, d2, err2)
	}
	if !strings.HasPrefix(err.Error(), "redisstore: ") || !strings.Contains(err.Error(), "Ring") {
		t.Fatalf("New(*redis.Ring) = %v, want a redisstore error naming Ring", err)
	}
}
