package redisstore_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/redis/go-redis/v9"
)

// TestCloseRacingEveryCall: Close's "a call under way that would start
// such a call (one in a goroutine of its own) once Close has begun returns
// ErrClosed instead" for each call of the store: a Take, Peek, Reset,
// GiveBack or Refund that had passed its check of closed when Close ran
// (paused in the injected clock's Now), on a client without
// ContextTimeoutEnabled and a context with a deadline, sends nothing to
// Redis and returns ErrClosed. Close waits for the calls run in a
// goroutine of their own, so none may start once it has returned.
func TestCloseRacingEveryCall(t *testing.T) {
	srv := sharedServer(t)
	fw := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}, Key: "k"}
	lq := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.LeakyQueue, Limit: 1, Window: time.Second, MaxDelay: time.Minute}, Key: "q"}
	calls := map[string]func(ctx context.Context, s *redisstore.Store, ds []algorithms.Decision) error{
		"Take": func(ctx context.Context, s *redisstore.Store, _ []algorithms.Decision) error {
			_, err := s.Take(ctx, fw)
			return err
		},
		"Peek": func(ctx context.Context, s *redisstore.Store, _ []algorithms.Decision) error {
			return s.Peek(ctx, make([]algorithms.Decision, 1), []algorithms.Check{fw})
		},
		"Reset": func(ctx context.Context, s *redisstore.Store, _ []algorithms.Decision) error {
			return s.Reset(ctx, fw)
		},
		"GiveBack": func(ctx context.Context, s *redisstore.Store, ds []algorithms.Decision) error {
			return s.GiveBack(ctx, make([]algorithms.Refunded, 1), []algorithms.Check{fw}, ds[:1], 0)
		},
		"Refund": func(ctx context.Context, s *redisstore.Store, ds []algorithms.Decision) error {
			return s.Refund(ctx, make([]algorithms.Refunded, 1), []algorithms.Check{lq}, ds[1:], 0)
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			var closed atomic.Bool
			hook := &sentAfter{closed: &closed}
			client := redis.NewClient(&redis.Options{Addr: srv.Addr})
			defer client.Close()
			client.AddHook(hook)
			clk := &pausingClock{t: time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC), entered: make(chan struct{}), goOn: make(chan struct{})}
			s, err := redisstore.New(client, redisstore.WithPrefix(uniquePrefix(t)), redisstore.WithClock(clk))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			ds, err := s.Take(ctx, fw, lq) // loads the library; admitted
			if err != nil || !ds[0].Allowed || !ds[1].Allowed {
				t.Fatalf("Take = %+v, %v", ds, err)
			}
			clk.armed.Store(true)
			done := make(chan error, 1)
			go func() { done <- call(ctx, s, ds) }()
			hangguard.Await(t, clk.entered, 10*time.Second, name+" reading the clock")
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			closed.Store(true)
			close(clk.goOn)
			err = hangguard.Await(t, done, 10*time.Second, name+" returning")
			if n := hook.n.Load(); n != 0 || !errors.Is(err, algorithms.ErrClosed) {
				t.Fatalf("a %s under way when Close returned sent %d commands to Redis and returned %v; want none sent and ErrClosed", name, n, err)
			}
		})
	}
}
