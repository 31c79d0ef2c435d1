package redisstore_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/redis/go-redis/v9"
)

// pausingClock is an injected clock whose Now, once armed, tells the test
// it was called and waits for it to go on.
type pausingClock struct {
	t       time.Time
	armed   atomic.Bool
	entered chan struct{}
	goOn    chan struct{}
}

func (c *pausingClock) Now() time.Time {
	if c.armed.CompareAndSwap(true, false) {
		c.entered <- struct{}{}
		<-c.goOn
	}
	return c.t
}

// sentAfter counts the commands sent once closed is set.
type sentAfter struct {
	redistest.PassHooks
	closed *atomic.Bool
	n      atomic.Int64
}

func (h *sentAfter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.closed.Load() {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

// TestCloseRacingTake: Close waits for the calls a Take runs in a goroutine
// of its own (a client without ContextTimeoutEnabled, a context with a
// deadline), so none may start once Close has returned. A Take that had
// passed its check of closed when Close ran (here paused in the injected
// clock's Now) must not then start one and send to Redis: it returns
// ErrClosed.
func TestCloseRacingTake(t *testing.T) {
	srv := sharedServer(t)
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
	check := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 10, Window: time.Hour}, Key: "k"}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Take(ctx, check); err != nil { // loads the library
		t.Fatal(err)
	}
	clk.armed.Store(true)
	done := make(chan error, 1)
	go func() {
		_, err := s.Take(ctx, check)
		done <- err
	}()
	hangguard.Await(t, clk.entered, 10*time.Second, "the Take reading the clock") // it is past its check of closed
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	closed.Store(true)
	close(clk.goOn)
	err = hangguard.Await(t, done, 10*time.Second, "the Take returning")
	if n := hook.n.Load(); n != 0 || !errors.Is(err, algorithms.ErrClosed) {
		t.Fatalf("a Take under way when Close returned sent %d commands to Redis and returned %v; want none sent and ErrClosed", n, err)
	}
}
