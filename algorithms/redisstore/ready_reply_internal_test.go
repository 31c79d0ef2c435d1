package redisstore

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
	"github.com/redis/go-redis/v9"
)

// endsAtReply is a caller's context that ends exactly as its call's reply
// is ready: its Done, asked by the caller waiting for the store's
// goroutine (evalOr, del), first waits for that goroutine to end, which
// it does once the reply is in its channel, and then returns a closed
// channel, so that the caller finds both ready. Before the call has
// reached the client (replyHook marks it), Done returns an open channel:
// the store asks it first whether the context can end at all.
type endsAtReply struct {
	context.Context // Value, Deadline: none
	t               *testing.T
	s               *Store

	mu        sync.Mutex
	reached   bool // the call reached the client (replyHook)
	fired     bool
	done      chan struct{}
	doneCalls int
}

func (c *endsAtReply) Done() <-chan struct{} {
	ended := make(chan struct{})
	go func() { c.s.inflight.Wait(); close(ended) }()
	select {
	case <-ended:
	case <-time.After(10 * time.Second): // a failure bound
		c.t.Error("the store's goroutine had not ended after 10s")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.doneCalls++
	if c.reached && !c.fired {
		c.fired = true
		close(c.done)
	}
	return c.done
}

// ended reports whether the context has ended, and how many times Done
// was asked.
func (c *endsAtReply) ended() (bool, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fired, c.doneCalls
}

func (c *endsAtReply) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fired {
		return context.DeadlineExceeded
	}
	return nil
}

// replyHook sends a command of a call on an endsAtReply context on a
// context of its own (go-redis never asks the caller's context, whose
// Done waits for the store's goroutine), and marks that the call reached
// the client.
type replyHook struct{ redistest.PassHooks }

func (replyHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c, ok := ctx.(*endsAtReply)
		if !ok {
			return next(ctx, cmd)
		}
		c.mu.Lock()
		c.reached = true
		c.mu.Unlock()
		return next(context.Background(), cmd)
	}
}

// TestReplyReadyAtContextEndIsReturned: a call whose reply is ready when
// its caller's context ends (both ready as the caller looks: a deadline
// met exactly as the reply arrived) returns the reply, not the context's
// error: Redis ran the call and answered it. On a client without
// ContextTimeoutEnabled, where the store's goroutine runs the call, the
// caller's select chose between the two at random (Go picks uniformly
// among ready cases): a Take admitted and counted by Redis returned
// context.DeadlineExceeded about every other time, and a Reset done
// likewise. Each case runs rounds times: the old select passes all of
// them with probability 2^-rounds; the store now looks at the reply once
// more, without blocking, after the context ends, and returns it every
// time.
func TestReplyReadyAtContextEndIsReturned(t *testing.T) {
	const rounds = 64
	srv := redistest.New(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer client.Close()
	client.AddHook(replyHook{})
	// No timeout of the store's own: the caller's context is the call's.
	s, err := New(client, WithTimeout(0), WithPrefix("ready"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check := algorithms.Check{Spec: algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 1000, Window: time.Hour}, Key: "k"}
	if _, err := s.Take(context.Background(), check); err != nil { // the library loaded
		t.Fatal(err)
	}
	newCtx := func() *endsAtReply {
		return &endsAtReply{Context: context.Background(), t: t, s: s, done: make(chan struct{})}
	}
	t.Run("Take", func(t *testing.T) {
		lost := 0
		for i := range rounds {
			ctx := newCtx()
			d, err := s.Take(ctx, check)
			if fired, calls := ctx.ended(); !fired {
				t.Fatalf("round %d: the context did not end at the reply (Done asked %d times)", i, calls)
			}
			if err != nil {
				lost++
				continue
			}
			if !d[0].Allowed {
				t.Fatalf("round %d: Take = %+v, want admitted", i, d[0])
			}
		}
		peek := make([]algorithms.Decision, 1)
		if err := s.Peek(context.Background(), peek, []algorithms.Check{check}); err != nil {
			t.Fatal(err)
		}
		if lost > 0 {
			t.Errorf("%d of %d Takes whose reply was ready when their context ended returned the context's error; Redis counted all %d (Remaining %d of 999)", lost, rounds, rounds, peek[0].Remaining)
		}
	})
	t.Run("Reset", func(t *testing.T) {
		lost := 0
		for i := range rounds {
			ctx := newCtx()
			err := s.Reset(ctx, check)
			if fired, calls := ctx.ended(); !fired {
				t.Fatalf("round %d: the context did not end at the reply (Done asked %d times)", i, calls)
			}
			if err != nil {
				lost++
			}
		}
		if lost > 0 {
			t.Errorf("%d of %d Resets whose DEL's reply was ready when their context ended returned the context's error", lost, rounds)
		}
	})
}
