package adaptive

import (
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// TestJudgedWindowsAreReleased: the window list does not grow with the
// periods: a window judged is no longer reachable from the Controller,
// also those requests made while an evaluation was pending (the lock
// held here, as an evaluation paused holds it) and the one a clock set
// back merged.
func TestJudgedWindowsAreReleased(t *testing.T) {
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	c := newInternalController(t, Config{Clock: clock, Period: time.Second, MinSamples: 1})
	var made []weak.Pointer[window]
	remember := func() {
		for w := c.win.Load(); w != nil; w = w.next.Load() {
			made = append(made, weak.Make(w))
		}
	}
	for range 5 {
		c.Observe(3*time.Millisecond, 200)
		remember()
		clock.Advance(time.Second)
		if err := c.Evaluate(); err != nil {
			t.Fatal(err)
		}
	}
	c.mu.Lock() // an evaluation pending
	for range 5 {
		c.Observe(3*time.Millisecond, 200)
		clock.Advance(time.Second)
	}
	remember()
	c.mu.Unlock()
	if err := c.Evaluate(); err != nil {
		t.Fatal(err)
	}
	c.Observe(3*time.Millisecond, 200)
	remember()
	clock.Set(clock.Now().Add(-time.Hour)) // restarts the period
	if err := c.Evaluate(); err != nil {
		t.Fatal(err)
	}
	c.Observe(3*time.Millisecond, 200)
	clock.Advance(time.Second)
	if err := c.Evaluate(); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.GC()
	kept := 0
	for _, p := range made {
		if p.Value() != nil {
			kept++
		}
	}
	if kept != 0 {
		t.Errorf("%d of the %d windows judged still reachable, want none", kept, len(made))
	}
	runtime.KeepAlive(c) // reachable throughout: the windows are released by it
}
