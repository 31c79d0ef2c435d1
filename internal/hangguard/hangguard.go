// Package hangguard bounds, in tests, a wait for something that should
// happen at once: a guard against a hang, so that the test fails with a
// message instead of the run timing out, never a wait that makes a test
// pass.
//
// It counts the time the test process runs, not the time on the wall. A
// guard of d ticks every d/100 (every nanosecond for a d below 100ns) and
// expires at its 100th tick; a ticker keeps one tick for a receiver that
// missed several, so a process stopped or starved by a loaded machine for
// longer than d loses the ticks it did not run for. A time.After(d) would fire as soon as the process ran
// again, before the goroutine it waits for, woken at the same moment, had
// done its work; CI runs on loaded machines have failed so. [Poll] counts
// its tries the same way: a sleep that a stopped process overran counts
// once.
package hangguard

import (
	"testing"
	"time"
)

// ticks is how many ticks a Guard counts.
const ticks = 100

// A Guard expires after d of the process's running time (see the package
// doc). Receive from C in the select that waits, and call Expired for each
// tick received; Stop it when done.
type Guard struct {
	// C delivers the guard's ticks.
	C      <-chan time.Time
	ticker *time.Ticker
	left   int
}

// New returns a running Guard of d, which must be positive.
func New(d time.Duration) *Guard {
	tk := time.NewTicker(max(d/ticks, 1))
	return &Guard{C: tk.C, ticker: tk, left: ticks}
}

// Expired counts a tick received from C and reports whether it was the
// last.
func (g *Guard) Expired() bool {
	g.left--
	return g.left <= 0
}

// Stop stops the guard's ticker.
func (g *Guard) Stop() { g.ticker.Stop() }

// Within returns what c gives (a value sent, or the zero value when c is
// closed) and true, or false when a Guard of d expires first.
func Within[T any](c <-chan T, d time.Duration) (T, bool) {
	g := New(d)
	defer g.Stop()
	return within(c, g)
}

func within[T any](c <-chan T, g *Guard) (T, bool) {
	for {
		select {
		case v := <-c:
			return v, true
		case <-g.C:
			if g.Expired() {
				var zero T
				return zero, false
			}
		}
	}
}

// Await returns what c gives, failing tb with "<what> within <d>" when a
// Guard of d expires first.
func Await[T any](tb testing.TB, c <-chan T, d time.Duration, what string) T {
	tb.Helper()
	v, ok := Within(c, d)
	if !ok {
		tb.Fatalf("%s within %v", what, d)
	}
	return v
}

// Run runs fn in a goroutine and waits for it to return, failing tb with
// "<what> within <d>" when a Guard of d expires first.
func Run(tb testing.TB, d time.Duration, what string, fn func()) {
	tb.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	Await(tb, done, d, what)
}

// Poll calls cond until it reports true, sleeping every between calls, and
// reports whether it did before d/every calls (at least one) had reported
// false: d/every-1 sleeps, d less one interval of sleeping when every
// divides d, each sleep counted once however long the process was stopped
// in it.
func Poll(d, every time.Duration, cond func() bool) bool {
	for tries := max(d/every, 1); ; tries-- {
		if cond() {
			return true
		}
		if tries <= 1 {
			return false
		}
		time.Sleep(every) // polling another goroutine or process, not passing test time
	}
}
