package deadline

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRepliedNeverMovesBack: under concurrent calls and replies, the last
// reply noted only moves forward, and a Replied that has returned has
// noted every call begun before it (so its own call's deadline is
// ignored), however the writes to it interleave: a Replied that read an
// older count of calls must not overwrite a newer one, and one whose
// compare-and-swap lost to another write must try again. Interleavings
// are up to the scheduler: this is a stress test (run with -race), which
// fails on such a defect with a probability, not every time (on a 2-core
// machine, 5 runs in 5 for a plain Store in place of the compare-and-swap,
// about one in three for a Replied that gives up after losing one).
func TestRepliedNeverMovesBack(t *testing.T) {
	c := &Calls{now: func() time.Time { return t0 }}
	ctx, cancel := context.WithDeadline(context.Background(), t0.Add(time.Second))
	defer cancel()
	var stop atomic.Bool
	var back atomic.Uint64 // a value replied was seen to move back to, +1; 0: none
	var bg sync.WaitGroup
	bg.Go(func() { // the watcher
		for last := uint64(0); !stop.Load(); {
			r := c.replied.Load()
			if r < last {
				back.CompareAndSwap(0, r+1)
				return
			}
			last = r
		}
	})
	var missed atomic.Uint64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20000 {
				tk := c.Begin(ctx)
				c.Replied()
				if !c.Ignores(tk, context.DeadlineExceeded) {
					missed.CompareAndSwap(0, uint64(tk))
				}
			}
		})
	}
	wg.Wait()
	stop.Store(true)
	bg.Wait()
	if b := back.Load(); b != 0 {
		t.Errorf("replied moved back to %d", b-1)
	}
	if tk := missed.Load(); tk != 0 {
		t.Errorf("ticket %#x counted after its own call's Replied returned", tk)
	}
}
