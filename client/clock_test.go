package client_test

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
)

// t0 is a whole second, so HTTP-dates and Unix reset times line up with it.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeClock is a virtual clock. Sleep blocks until the clock reaches the
// wake-up instant; the clock moves only in drive, and only when every
// goroutine drive runs is asleep in it, to the earliest wake-up instant. So
// time stands still while any caller is working (taking its slot, talking to
// the test server), and the server sees the exact virtual instant at which
// each request left. Nothing sleeps in real time.
type fakeClock struct {
	mu      sync.Mutex
	cond    sync.Cond
	now     time.Time
	auto    bool // Sleep advances the clock itself (single-goroutine tests)
	sleeps  []time.Duration
	waiters []*waiter
	active  int // goroutines of drive not finished
}

type waiter struct {
	at   time.Time
	ctx  context.Context
	wake chan struct{}
}

var _ client.Clock = (*fakeClock)(nil)

func newFakeClock() *fakeClock {
	c := &fakeClock{now: t0}
	c.cond.L = &c.mu
	return c
}

// newAutoClock returns a clock whose Sleep advances virtual time by d and
// returns at once: for tests with one goroutine.
func newAutoClock() *fakeClock {
	c := newFakeClock()
	c.auto = true
	return c
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeps = append(c.sleeps, d)
	if err := ctx.Err(); err != nil || d <= 0 {
		c.mu.Unlock()
		return err
	}
	if c.auto {
		c.now = c.now.Add(d)
		c.mu.Unlock()
		return nil
	}
	w := &waiter{at: c.now.Add(d), ctx: ctx, wake: make(chan struct{})}
	c.waiters = append(c.waiters, w)
	c.cond.Broadcast()
	c.mu.Unlock()
	select {
	case <-w.wake:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		for i, x := range c.waiters {
			if x == w {
				c.waiters = append(c.waiters[:i], c.waiters[i+1:]...)
				break
			}
		}
		c.cond.Broadcast()
		c.mu.Unlock()
		return ctx.Err()
	}
}

// Sleeps returns the durations Sleep was called with, in call order.
func (c *fakeClock) Sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.sleeps...)
}

// Advance moves the clock forward by d, waking the sleepers it passes.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.wakeLocked()
}

// waitSleepers blocks until n goroutines are asleep in the clock.
func (c *fakeClock) waitSleepers(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.waiters) < n {
		c.cond.Wait()
	}
}

// asleepLocked returns the number of waiters still asleep: one whose
// context has ended is about to return, and time must not move before it
// has. c.mu must be held.
func (c *fakeClock) asleepLocked() int {
	n := 0
	for _, w := range c.waiters {
		if w.ctx.Err() == nil {
			n++
		}
	}
	return n
}

// wakeLocked wakes the waiters whose instant has come. c.mu must be held.
func (c *fakeClock) wakeLocked() {
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
		} else {
			close(w.wake)
		}
	}
	for i := len(kept); i < len(c.waiters); i++ {
		c.waiters[i] = nil
	}
	c.waiters = kept
}

// drive runs fn(0) … fn(n−1) concurrently and advances virtual time
// whenever all of them that have not returned are asleep in the clock, to
// the earliest wake-up instant. It returns when all have returned. Only the
// goroutines of drive may sleep in the clock meanwhile.
func (c *fakeClock) drive(n int, fn func(i int)) {
	c.mu.Lock()
	c.active += n
	c.mu.Unlock()
	for i := 0; i < n; i++ {
		go func() {
			defer func() {
				c.mu.Lock()
				c.active--
				c.cond.Broadcast()
				c.mu.Unlock()
			}()
			fn(i)
		}()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.active > 0 {
		if c.asleepLocked() < c.active {
			c.cond.Wait()
			continue
		}
		earliest := c.waiters[0].at
		for _, w := range c.waiters[1:] {
			if w.at.Before(earliest) {
				earliest = w.at
			}
		}
		if earliest.After(c.now) {
			c.now = earliest
		}
		c.wakeLocked()
	}
}

// TestFakeClockDrive checks the harness itself: sleepers wake in order of
// their instants, and time moves only to those instants.
func TestFakeClockDrive(t *testing.T) {
	c := newFakeClock()
	var mu sync.Mutex
	var woke []time.Duration
	delays := []time.Duration{3 * time.Second, time.Second, 2 * time.Second, time.Second}
	c.drive(len(delays), func(i int) {
		if err := c.Sleep(context.Background(), delays[i]); err != nil {
			t.Error(err)
		}
		mu.Lock()
		woke = append(woke, c.Now().Sub(t0))
		mu.Unlock()
	})
	sort.Slice(woke, func(i, j int) bool { return woke[i] < woke[j] })
	want := []time.Duration{time.Second, time.Second, 2 * time.Second, 3 * time.Second}
	if len(woke) != len(want) {
		t.Fatalf("woke %v, want %v", woke, want)
	}
	for i := range want {
		if woke[i] != want[i] {
			t.Fatalf("woke at %v, want %v", woke, want)
		}
	}
	if got := c.Now().Sub(t0); got != 3*time.Second {
		t.Errorf("clock at %v after drive, want 3s", got)
	}
}
