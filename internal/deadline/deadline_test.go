package deadline

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)

// TestIgnores: which ends of a call say nothing of the backend, for the
// tickets of Begin and of Watch, on a clock fixed at t0.
func TestIgnores(t *testing.T) {
	const none = -1 // no deadline
	wrapped := fmt.Errorf("redisstore: take: no reply from Redis within 1s: %w", context.DeadlineExceeded)
	for _, tc := range []struct {
		name      string
		left      time.Duration // from t0 to the call's deadline; none: no deadline
		before    bool          // the backend replied before the call began
		meanwhile bool          // the backend replied while the call waited
		ended     error
		ignores   bool
	}{
		{name: "fair deadline, no reply", left: time.Second, ended: context.DeadlineExceeded},
		// 50ms, not Budget: middleware.WithBreaker and
		// redisstore.WithCircuitBreaker document the number.
		{name: "budget of exactly 50ms", left: 50 * time.Millisecond, ended: context.DeadlineExceeded},
		{name: "budget a nanosecond short", left: 50*time.Millisecond - 1, ended: context.DeadlineExceeded, ignores: true},
		{name: "deadline already passed", left: -time.Hour, ended: context.DeadlineExceeded, ignores: true},
		{name: "reply meanwhile", left: time.Second, meanwhile: true, ended: context.DeadlineExceeded, ignores: true},
		{name: "reply only before the call", left: time.Second, before: true, ended: context.DeadlineExceeded},
		{name: "cancelled", left: time.Hour, ended: context.Canceled, ignores: true},
		{name: "cancelled, no deadline", left: none, ended: context.Canceled, ignores: true},
		{name: "not ended", left: time.Second, ended: nil},
		{name: "a wrapped deadline (the store's own timeout)", left: Budget - 1, ended: wrapped},
		{name: "another error", left: time.Second, ended: fmt.Errorf("dial tcp: connection refused")},
	} {
		for _, watch := range []bool{false, true} {
			name := tc.name + "/Begin"
			if watch {
				name = tc.name + "/Watch"
			}
			t.Run(name, func(t *testing.T) {
				c := &Calls{now: func() time.Time { return t0 }}
				ctx := context.Background()
				if tc.left != none {
					var cancel context.CancelFunc
					ctx, cancel = context.WithDeadline(ctx, t0.Add(tc.left))
					defer cancel()
				}
				if tc.before {
					c.Replied()
				}
				var tk Ticket
				if watch {
					tk = c.Watch(ctx)
				} else {
					tk = c.Begin(ctx)
				}
				if tc.meanwhile {
					c.Replied()
				}
				if got := c.Ignores(tk, tc.ended); got != tc.ignores {
					t.Errorf("Ignores(%#x, %v) = %v, want %v", tk, tc.ended, got, tc.ignores)
				}
			})
		}
	}
}

// TestBeginWithoutDeadline: a call on a context without a deadline gets a
// ticket from Begin that counts (a caller's breaker may know its probe by
// it), and the zero Ticket from Watch (which never counts).
func TestBeginWithoutDeadline(t *testing.T) {
	c := &Calls{now: func() time.Time { t.Fatal("the clock read for a context without a deadline"); return t0 }}
	if tk := c.Begin(context.Background()); tk == 0 || c.Ignores(tk, context.DeadlineExceeded) {
		t.Errorf("Begin = %#x, ignored %v; want a ticket that counts", tk, c.Ignores(tk, context.DeadlineExceeded))
	}
	if tk := c.Watch(context.Background()); tk != 0 {
		t.Errorf("Watch = %#x, want 0", tk)
	}
}

// TestTicketsUnique: Begin's tickets differ from each other, near
// deadlines or not; Watch takes a ticket only for a deadline that counts,
// and Replied writes only after a ticket was taken.
func TestTicketsUnique(t *testing.T) {
	c := &Calls{now: func() time.Time { return t0 }}
	nearCtx, cancel := context.WithDeadline(context.Background(), t0.Add(time.Millisecond))
	defer cancel()
	fairCtx, cancel2 := context.WithDeadline(context.Background(), t0.Add(time.Second))
	defer cancel2()
	c.Replied()
	if r := c.replied.Load(); r != 0 {
		t.Fatalf("Replied with no call begun wrote %d", r)
	}
	seen := map[Ticket]bool{}
	for i, ctx := range []context.Context{nearCtx, fairCtx, context.Background(), nearCtx, fairCtx} {
		tk := c.Begin(ctx)
		if seen[tk] {
			t.Errorf("Begin %d: ticket %#x given twice", i, tk)
		}
		seen[tk] = true
	}
	b := c.begun.Load()
	if tk := c.Watch(nearCtx); tk != 0 || c.begun.Load() != b {
		t.Errorf("Watch of a near deadline = %#x, %d tickets taken; want 0 and none", tk, c.begun.Load()-b)
	}
	if tk := c.Watch(fairCtx); tk == 0 || seen[tk] {
		t.Errorf("Watch of a fair deadline = %#x; want a new ticket", tk)
	}
}

// TestRepliedConcurrent: whatever the interleaving, a call begun before a
// Replied that has returned is ignored at its deadline, and one begun
// after every Replied is not (run with -race).
func TestRepliedConcurrent(t *testing.T) {
	c := &Calls{now: func() time.Time { return t0 }}
	ctx, cancel := context.WithDeadline(context.Background(), t0.Add(time.Second))
	defer cancel()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				tk := c.Begin(ctx)
				c.Replied()
				if !c.Ignores(tk, context.DeadlineExceeded) {
					t.Errorf("ticket %#x counted after a reply that followed it", tk)
					return
				}
			}
		})
	}
	wg.Wait()
	if tk := c.Watch(ctx); c.Ignores(tk, context.DeadlineExceeded) {
		t.Errorf("ticket %#x, begun after every reply, ignored", tk)
	}
}

// TestZeroCallsSystemClock: the zero Calls is ready to use and reads
// deadlines on the system clock, as context deadlines are: a deadline an
// hour away counts, one already less than Budget away does not (the
// clock only moves on, so the test cannot race it).
func TestZeroCallsSystemClock(t *testing.T) {
	var c Calls
	farCtx, cancel := context.WithDeadline(context.Background(), time.Now().Add(time.Hour))
	defer cancel()
	nearCtx, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(Budget/2))
	defer cancel2()
	for _, watch := range []bool{false, true} {
		take := c.Begin
		if watch {
			take = c.Watch
		}
		if tk := take(farCtx); c.Ignores(tk, context.DeadlineExceeded) {
			t.Errorf("watch %v: ticket %#x of a deadline an hour away ignored", watch, tk)
		}
		if tk := take(nearCtx); !c.Ignores(tk, context.DeadlineExceeded) {
			t.Errorf("watch %v: ticket %#x of a deadline %s away counted", watch, tk, Budget/2)
		}
	}
}
