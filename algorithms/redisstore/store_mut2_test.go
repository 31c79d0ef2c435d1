package redisstore_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
)

// TestShortestTimeoutSaysSo: WithTimeout's deadline is reported as the
// store's "no reply from Redis within" error wrapping
// context.DeadlineExceeded for any positive duration, the shortest one
// (1ns, which every call outlasts) included. (On a client bounding its I/O
// by the context, the call fails at once: its deadline has passed.)
func TestShortestTimeoutSaysSo(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: sharedServer(t).Addr, ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = client.Close() })
	s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)), redisstore.WithTimeout(time.Nanosecond))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Take(context.Background(), dayBucket)
	if !errors.Is(err, context.DeadlineExceeded) || err == context.DeadlineExceeded || !strings.Contains(err.Error(), "no reply from Redis within 1ns") {
		t.Errorf("Take with WithTimeout(1ns) = %v, want the store's error saying no reply came within 1ns, wrapping context.DeadlineExceeded", err)
	}
}

// endedContextHook gives every command a context of its own that has
// already ended: past its deadline, or cancelled. The client then fails
// the command with that bare context error (go-redis checks the context
// before it takes a connection), though neither the caller's context nor
// the store's timeout ended: a client (a hook) bounding its commands by a
// deadline of its own.
type endedContextHook struct {
	redistest.PassHooks
	cancel bool
}

func (h endedContextHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		var cancel context.CancelFunc
		if h.cancel {
			ctx, cancel = context.WithCancel(ctx)
		} else {
			ctx, cancel = context.WithDeadline(ctx, time.Now())
		}
		cancel()
		return next(ctx, cmd)
	}
}

// TestClientsOwnContextErrorIsNoStoreTimeout: a bare context error the
// client made of its own, while the caller's context has not ended, is
// returned as the store's error wrapping it (so the breaker counts it)
// without claiming that WithTimeout's deadline passed: with WithTimeout(0),
// a client deadline is no "no reply from Redis within 0s"; with one, a
// client's cancellation is no "no reply from Redis within 1m0s".
func TestClientsOwnContextErrorIsNoStoreTimeout(t *testing.T) {
	for _, c := range []struct {
		name string
		hook endedContextHook
		opts []redisstore.Option
		want error
	}{
		{"deadline_no_timeout", endedContextHook{}, []redisstore.Option{redisstore.WithTimeout(0)}, context.DeadlineExceeded},
		{"cancelled_with_timeout", endedContextHook{cancel: true}, []redisstore.Option{redisstore.WithTimeout(time.Minute)}, context.Canceled},
	} {
		t.Run(c.name, func(t *testing.T) {
			client := newClient(t)
			client.AddHook(c.hook)
			s, err := redisstore.New(client, append([]redisstore.Option{redisstore.WithPrefix(uniquePrefix(t))}, c.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, err = s.Take(context.Background(), dayBucket)
			if !errors.Is(err, c.want) || err == c.want || !strings.HasPrefix(err.Error(), "redisstore: take: ") || strings.Contains(err.Error(), "no reply from Redis") {
				t.Errorf("Take on a client failing with its own %v = %v, want %q, the store's error wrapping it, naming no timeout of the store", c.want, err, "redisstore: take: "+c.want.Error())
			}
		})
	}
}

// takeForgetting makes one Take of a check slice of its own through s and
// returns a weak pointer to the slice's check: the caller keeps no
// reference to it.
func takeForgetting(t *testing.T, s *redisstore.Store) weak.Pointer[algorithms.Check] {
	t.Helper()
	checks := make([]algorithms.Check, 1)
	checks[0] = dayBucket
	w := weak.Make(&checks[0])
	if _, err := s.Take(context.Background(), checks...); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestTakeKeepsNoCallersChecks: a Take that ended keeps no reference to the
// caller's checks (its request, reused through a pool, drops them), so
// that a garbage collection frees them once the caller drops them too.
// Each round's Take reuses the request the previous one released; a
// request the pool kept outlives one collection (its victim cache).
func TestTakeKeepsNoCallersChecks(t *testing.T) {
	s, err := redisstore.New(newClient(t), redisstore.WithPrefix(uniquePrefix(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for round := range 8 {
		w := takeForgetting(t, s)
		runtime.GC()
		if w.Value() != nil {
			t.Fatalf("round %d: the caller's checks are still reachable after the Take and a garbage collection: the store keeps them", round+1)
		}
	}
}
