package algorithms_test

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// hookClock returns ns; the first Now after hook is set runs hook once,
// after reading the instant it returns (a call that read the clock and then
// waited for a lock while another call ran).
type hookClock struct {
	ns   atomic.Int64
	hook func()
}

func (c *hookClock) Now() time.Time {
	t := time.Unix(0, c.ns.Load())
	if h := c.hook; h != nil {
		c.hook = nil
		h()
	}
	return t
}

// A Take that reads the clock just before a window ends, and a Sweep that
// reads it just after and runs before that Take gets its shard: the Sweep
// drops the key, idle at its instant, and the Take, decided at its own
// earlier instant, must not be counted in the window it arrived in, full.
func TestMemoryStoreSweepBetweenClockAndLockOfATake(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Second}
	clk := &hookClock{}
	clk.ns.Store(epoch.Add(500 * time.Millisecond).UnixNano())
	s, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	c := algorithms.Check{Spec: spec, Key: "k"}
	for range 5 {
		take(t, s, c)
	}
	clk.ns.Store(epoch.Add(999 * time.Millisecond).UnixNano())
	clk.hook = func() {
		clk.ns.Store(epoch.Add(time.Second).UnixNano())
		if n := s.Sweep(); n != 1 {
			t.Errorf("Sweep() = %d, want 1", n)
		}
	}
	d := take(t, s, c)[0]
	if !d.Allowed {
		return // denied in the window it arrived in: fine
	}
	// Admitted: it must count in the window of the sweep (as a request at
	// an instant before the key's state is decided at that state's instant),
	// not in the full one.
	admitted := 0
	for range 5 {
		if take(t, s, c)[0].Allowed {
			admitted++
		}
	}
	if admitted != 4 {
		t.Errorf("a request at 999ms after a sweep at 1s was admitted (%+v) in the window of 5 it arrived in, already full: the next window then admitted %d more, want 4", d, admitted)
	}
}

// sweptIdleAfter is how long before it becomes idle the key of the swept
// key tests is taken (cost 2 of 5 a second): a window (two for
// sliding_window), 1ns more for a log (an event leaves it after a whole
// window), and the time the buckets and the queue take to be back to full
// (2/5 s).
var sweptIdleAfter = map[algorithms.Kind]time.Duration{
	algorithms.FixedWindow:    time.Second,
	algorithms.SlidingWindow:  2 * time.Second,
	algorithms.SlidingLog:     time.Second + 1,
	algorithms.SlidingBuckets: time.Second,
	algorithms.TokenBucket:    400 * time.Millisecond,
	algorithms.LeakyBucket:    400 * time.Millisecond,
	algorithms.LeakyQueue:     400 * time.Millisecond,
}

// TestMemoryStoreSweptKeyDecidedAtTheSweepsInstant: a check that read the
// clock 1ms before a Sweep that then dropped its key, idle from the
// sweep's instant on (and not before), is decided as a new key at the
// sweep's instant, and its Decision says so from its own instant: the same
// as a new key's at the sweep's instant, every duration 1ms longer. For
// every kind, through TakeOne and through a Take of two checks.
func TestMemoryStoreSweptKeyDecidedAtTheSweepsInstant(t *testing.T) {
	const lag = time.Millisecond
	sweepAt := epoch.Add(10 * time.Second)
	idleAfter := sweptIdleAfter
	for _, k := range algorithms.Kinds {
		spec := kindSpec(k, 5, 5)
		takenAt := sweepAt.Add(-idleAfter[k])
		c := algorithms.Check{Spec: spec, Key: "k", Cost: 2}
		other := algorithms.Check{Spec: perSecond, Key: "other"}
		for _, two := range []bool{false, true} {
			checks := []algorithms.Check{c}
			if two {
				checks = append(checks, other)
			}
			t.Run(fmt.Sprintf("%s/%d checks", k, len(checks)), func(t *testing.T) {
				ref, refClk := newStore(t)
				refClk.Set(sweepAt)
				want := lagged(take(t, ref, checks...)[0], lag)
				s := sweptAtNextReading(t, c, takenAt, sweepAt, lag)
				if got := take(t, s, checks...)[0]; got != want {
					t.Errorf("decision %v before a sweep that dropped the key = %+v, want %+v (a new key's at the sweep, durations %v longer)", lag, got, want, lag)
				}
			})
		}
	}
}

// lagged returns d as seen from an instant lag before it was decided: its
// ResetAfter, NextAfter and Delay, where not zero, lag longer.
func lagged(d algorithms.Decision, lag time.Duration) algorithms.Decision {
	if d.ResetAfter > 0 {
		d.ResetAfter += lag
	}
	if d.NextAfter > 0 {
		d.NextAfter += lag
	}
	if d.Delay > 0 {
		d.Delay += lag
	}
	return d
}

// sweptAtNextReading returns a store that took c at takenAt and whose clock
// now reads lag before sweepAt; its next reading moves the clock to
// sweepAt and sweeps the store, which must drop one key (c's, idle from
// sweepAt on), before the reading returns the earlier instant.
func sweptAtNextReading(t *testing.T, c algorithms.Check, takenAt, sweepAt time.Time, lag time.Duration) *algorithms.MemoryStore {
	t.Helper()
	clk := &hookClock{}
	clk.ns.Store(takenAt.UnixNano())
	s, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	take(t, s, c)
	clk.ns.Store(sweepAt.Add(-lag).UnixNano())
	clk.hook = func() {
		clk.ns.Store(sweepAt.UnixNano())
		if n := s.Sweep(); n != 1 {
			t.Errorf("Sweep() = %d, want 1", n)
		}
	}
	return s
}

// TestMemoryStoreSweepOfNothingLeavesNewKeysAtTheirInstant: a Sweep that
// drops no key moves no instant. A new key whose check read the clock 1ms
// before that Sweep ran is decided at its own instant, not the sweep's: a
// fixed window's ResetAfter is the 1ms left of the window it arrived in.
func TestMemoryStoreSweepOfNothingLeavesNewKeysAtTheirInstant(t *testing.T) {
	spec := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Second}
	clk := &hookClock{}
	s, err := algorithms.NewMemoryStore(algorithms.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	clk.ns.Store(epoch.Add(10 * time.Second).UnixNano())
	inUse := algorithms.Spec{Algorithm: algorithms.FixedWindow, Limit: 5, Window: time.Minute}
	take(t, s, algorithms.Check{Spec: inUse, Key: "in use"})
	clk.ns.Store(epoch.Add(11*time.Second - time.Millisecond).UnixNano())
	clk.hook = func() {
		clk.ns.Store(epoch.Add(11 * time.Second).UnixNano())
		if n := s.Sweep(); n != 0 {
			t.Errorf("Sweep() = %d, want 0 (the key in use is within its minute)", n)
		}
	}
	d := take(t, s, algorithms.Check{Spec: spec, Key: "new"})[0]
	if !d.Allowed || d.ResetAfter != time.Millisecond {
		t.Errorf("new key 1ms before a window ends, after a Sweep that dropped nothing = %+v, want allowed with ResetAfter 1ms", d)
	}
}
