package client_test

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratekeeper/ratekeeper/client"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// t0 is a whole second, so HTTP-dates and Unix reset times line up with it.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeClock is a virtual clock. Sleep blocks until the clock reaches the
// wake-up instant; the clock moves only in drive, and only when every
// goroutine drive runs is asleep in it, to the earliest wake-up instant. So
// time stands still while any caller is working (taking its slot, talking to
// the test server), and the server sees the exact virtual instant at which
// each request left. Nothing sleeps in real time.
//
// A test that moves the clock itself (Advance) must first know that the
// sleeps it means to end are set on the clock (waitSleepers, waitAsleep,
// awaitSleepers): a request told of something (a response, a hold) is not
// yet asleep, and time moved before its sleep is set never reaches it.
// Every wait of the harness for the code under test is bounded by
// waitBound and fails the test when it ends, instead of hanging the run.
type fakeClock struct {
	mu      sync.Mutex
	changed chan struct{} // closed, and replaced, when waiters or active change
	now     time.Time
	auto    bool // Sleep advances the clock itself (single-goroutine tests)
	sleeps  []time.Duration
	waiters []*waiter
	active  int // goroutines of drive not finished
}

// waitBound bounds, in the test process's running time (see hangguard),
// each wait of the harness for something the code under test should do at
// once: a failure guard, never a wait that makes a test pass. drive counts
// it from the last change on the clock (a sleep set, woken or ended, a
// goroutine returned), so a long run that keeps moving is not cut short.
const waitBound = 10 * time.Second

type waiter struct {
	at   time.Time
	ctx  context.Context
	wake chan struct{}
}

var _ client.Clock = (*fakeClock)(nil)

func newFakeClock() *fakeClock {
	return &fakeClock{now: t0, changed: make(chan struct{})}
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
	c.changedLocked()
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
		c.changedLocked()
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
// Only a sleep already set on the clock is woken: see the type's doc.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.wakeLocked()
}

// changedLocked tells the harness's waits that waiters or active changed.
// c.mu must be held.
func (c *fakeClock) changedLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// within reports whether cond, called with c.mu held at each change on the
// clock, reports true within waitBound.
func (c *fakeClock) within(cond func() bool) bool {
	g := hangguard.New(waitBound)
	defer g.Stop()
	for {
		c.mu.Lock()
		ok, changed := cond(), c.changed
		c.mu.Unlock()
		if ok {
			return true
		}
	wait:
		for {
			select {
			case <-changed:
				break wait
			case <-g.C:
				if g.Expired() {
					return false
				}
			}
		}
	}
}

// sleepersWithin reports whether n sleeps are set on the clock (woken or
// not, their contexts ended or not) within waitBound.
func (c *fakeClock) sleepersWithin(n int) bool {
	return c.within(func() bool { return len(c.waiters) >= n })
}

// waitSleepers waits until n sleeps are set on the clock, failing t
// (FailNow: call it from the test's goroutine) when they are not within
// waitBound. what names them.
func (c *fakeClock) waitSleepers(t testing.TB, n int, what string) {
	t.Helper()
	if !c.sleepersWithin(n) {
		t.Fatalf("%s: %d sleeps were not all set on the fake clock within %v (%d are)", what, n, waitBound, c.sleepers())
	}
}

// awaitSleepers waits until n sleeps are set on clock, failing t (Errorf:
// any goroutine may call it) when they are not within waitBound, and
// reports whether they were. what names them.
func awaitSleepers(t testing.TB, clock *fakeClock, n int, what string) bool {
	t.Helper()
	if !clock.sleepersWithin(n) {
		t.Errorf("%s: %d sleeps were not all set on the fake clock within %v (%d are)", what, n, waitBound, clock.sleepers())
		return false
	}
	return true
}

// sleepers returns the number of sleeps set on the clock.
func (c *fakeClock) sleepers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}

// asleep returns the callers asleep in c (not about to return).
func (c *fakeClock) asleep() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.asleepLocked()
}

// waitAsleep waits until n callers are asleep in c (their contexts not
// ended), failing t (FailNow: call it from the test's goroutine) when they
// are not within waitBound. what names them.
func (c *fakeClock) waitAsleep(t testing.TB, n int, what string) {
	t.Helper()
	if !c.within(func() bool { return c.asleepLocked() >= n }) {
		t.Fatalf("%s: %d callers were not all asleep in the fake clock within %v (%d are)", what, n, waitBound, c.asleep())
	}
}

// awaitAsleep waits until n callers are asleep in clock (their contexts
// not ended), failing t (Errorf: any goroutine may call it) when they are
// not within waitBound, and reports whether they were. what names them.
func awaitAsleep(t testing.TB, clock *fakeClock, n int, what string) bool {
	t.Helper()
	if !clock.within(func() bool { return clock.asleepLocked() >= n }) {
		t.Errorf("%s: %d callers were not all asleep in the fake clock within %v (%d are)", what, n, waitBound, clock.asleep())
		return false
	}
	return true
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
	if len(kept) != len(c.waiters) {
		c.changedLocked()
	}
	c.waiters = kept
}

// drive runs fn(0) … fn(n−1) concurrently and advances virtual time
// whenever all of them that have not returned are asleep in the clock, to
// the earliest wake-up instant. It returns when all have returned. Only the
// goroutines of drive may sleep in the clock meanwhile. When nothing
// changes on the clock for waitBound while some of them are neither asleep
// in it nor returned (waiting for something that never comes), it fails t
// (FailNow: call it from the test's goroutine), leaving them where they
// are.
func (c *fakeClock) drive(t testing.TB, n int, fn func(i int)) {
	t.Helper()
	if err := c.run(n, fn); err != nil {
		t.Fatal(err)
	}
}

// run is drive, returning an error where drive fails its test: for a
// goroutine other than the test's.
func (c *fakeClock) run(n int, fn func(i int)) error {
	c.mu.Lock()
	c.active += n
	c.mu.Unlock()
	for i := 0; i < n; i++ {
		go func() {
			defer func() {
				c.mu.Lock()
				c.active--
				c.changedLocked()
				c.mu.Unlock()
			}()
			fn(i)
		}()
	}
	for {
		c.mu.Lock()
		if c.active <= 0 {
			c.mu.Unlock()
			return nil
		}
		if c.asleepLocked() >= c.active {
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
			c.mu.Unlock()
			continue
		}
		changed := c.changed
		c.mu.Unlock()
		if _, ok := hangguard.Within(changed, waitBound); !ok {
			c.mu.Lock()
			defer c.mu.Unlock()
			asleep := c.asleepLocked()
			return fmt.Errorf("fakeClock.drive: nothing changed on the clock for %v at %v: %d of its goroutines are neither asleep in it (%d are) nor returned",
				waitBound, c.now.Sub(t0), c.active-asleep, asleep)
		}
	}
}

// TestFakeClockDrive checks the harness itself: sleepers wake in order of
// their instants, and time moves only to those instants.
func TestFakeClockDrive(t *testing.T) {
	c := newFakeClock()
	var mu sync.Mutex
	var woke []time.Duration
	delays := []time.Duration{3 * time.Second, time.Second, 2 * time.Second, time.Second}
	c.drive(t, len(delays), func(i int) {
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

// The harness's waits for the code under test end, failing, instead of
// hanging the package's run: waiting for a sleep that is never set, and
// drive with a goroutine waiting for something that never comes, each give
// up after waitBound. (In a synctest bubble: the bound's time is virtual.)
func TestFakeClockWaitsAreBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newFakeClock()
		start := time.Now()
		if c.sleepersWithin(1) {
			t.Error("sleepersWithin(1) with nothing asleep = true")
		}
		if got := time.Since(start); got != waitBound {
			t.Errorf("sleepersWithin gave up after %v, want %v", got, waitBound)
		}
		block := make(chan struct{})
		start = time.Now()
		err := c.run(2, func(i int) {
			if i == 0 {
				c.Sleep(context.Background(), time.Second)
				return
			}
			c.Sleep(context.Background(), time.Hour)
			<-block
		})
		if err == nil {
			t.Error("drive with a goroutine blocked off the clock returned no error")
		}
		// Time moved to the first sleeper's second, then to the second's
		// hour; then nothing changed.
		if got := time.Since(start); got != waitBound {
			t.Errorf("drive gave up after %v, want %v", got, waitBound)
		}
		if got := c.Now().Sub(t0); got != time.Hour {
			t.Errorf("clock at %v, want 1h", got)
		}
		close(block) // lets it end, so the bubble can
	})
}
