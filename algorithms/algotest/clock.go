package algotest

import (
	"context"
	"sync"
	"time"
)

// A Clock is a manual clock for tests: it reads the time it was last set to
// and moves only when told. It implements algorithms.Clock and is safe for
// concurrent use, so a store under test and the goroutines driving it can
// share one. Its Sleep makes it a step clock for code that waits (such as
// the client package's Clock): a wait passes at once.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a Clock that reads t0.
func NewClock(t0 time.Time) *Clock { return &Clock{now: t0} }

// Now returns the time the clock was last set to.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t, forwards or backwards.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// Advance moves the clock forward by d and returns the new time.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// Sleep moves the clock forward by d at once and returns nil, or returns
// ctx.Err() without moving it when ctx is already done.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.Advance(d)
	return nil
}
