package algotest

import (
	"sync"
	"time"
)

// A Clock is a manual clock for tests: it reads the time it was last set to
// and moves only when told. It implements algorithms.Clock and is safe for
// concurrent use, so a store under test and the goroutines driving it can
// share one.
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
