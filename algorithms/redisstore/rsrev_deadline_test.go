package redisstore_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
)

// silentServer accepts connections and reads them, never replying: a
// paused Redis.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				_, _ = io.Copy(io.Discard, c)
				_ = c.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
	})
	return ln.Addr().String()
}

// TestDeadlineAtTheClientsReadDeadline: with ContextTimeoutEnabled,
// go-redis sets the connection's read deadline to the context's, and the
// read can fail with an i/o timeout a moment before the context's own
// timer marks it done. The store must still report the deadline as what
// it is: the caller's context.DeadlineExceeded as is (which the circuit
// breaker does not count when the caller's deadline gave Redis no fair
// chance), and WithTimeout's as an error wrapping it. Before the fix, most
// such Takes returned "redisstore: take: i/o timeout", matching neither:
// the breaker counted a burst of short caller deadlines as failures of
// Redis and opened, and a WithTimeout error did not wrap
// context.DeadlineExceeded.
func TestDeadlineAtTheClientsReadDeadline(t *testing.T) {
	addr := silentServer(t)
	client := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true, Protocol: 2, DisableIdentity: true, MaxRetries: -1, ReadTimeout: time.Minute})
	t.Cleanup(func() { _ = client.Close() })
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Second}
	check := algorithms.Check{Spec: spec, Key: "k"}
	const n = 60

	t.Run("caller", func(t *testing.T) {
		store, err := redisstore.New(client, redisstore.WithCircuitBreaker(3, time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		bad := 0
		for i := range n {
			// Far less than the breaker's fair chance (50 ms): never a
			// failure of Redis.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Millisecond)
			_, err := store.Take(ctx, check)
			cancel()
			if err != context.DeadlineExceeded {
				bad++
				if bad <= 3 {
					t.Errorf("Take %d at the caller's deadline: %v, want context.DeadlineExceeded as is", i+1, err)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%d of %d Takes at the caller's deadline did not return it", bad, n)
		}
	})

	t.Run("WithTimeout", func(t *testing.T) {
		store, err := redisstore.New(client, redisstore.WithTimeout(3*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		bad := 0
		for i := range n {
			_, err := store.Take(context.Background(), check)
			if !errors.Is(err, context.DeadlineExceeded) || err == context.DeadlineExceeded || !strings.Contains(err.Error(), "no reply from Redis within") {
				bad++
				if bad <= 3 {
					t.Errorf("Take %d at WithTimeout's deadline: %v, want the store's error wrapping context.DeadlineExceeded", i+1, err)
				}
			}
		}
		if bad > 0 {
			t.Errorf("%d of %d Takes at WithTimeout's deadline did not say so", bad, n)
		}
	})
}
