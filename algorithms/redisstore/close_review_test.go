package redisstore_test

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/redisstore/redistest"
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
