package deadline

import (
	"context"
	"testing"
	"time"
)

// TestExtremeDeadlines: near measures the time left with Time.Sub, which
// saturates at the largest and smallest Duration; a deadline far in the
// future counts, one far in the past (or a clock far ahead of it, a clock
// that jumped) does not, and a clock set back before a deadline gives the
// call more time, never a wrap-around.
func TestExtremeDeadlines(t *testing.T) {
	far := time.Unix(1<<62, 0)      // Sub from t0 saturates at the largest Duration
	ancient := time.Unix(-1<<62, 0) // and at the smallest
	for _, tc := range []struct {
		name     string
		now      time.Time
		deadline time.Time
		counts   bool
	}{
		{"deadline centuries away", t0, far, true},
		{"deadline centuries ago", t0, ancient, false},
		{"clock centuries past the deadline", far, t0, false},
		{"clock centuries before the deadline", ancient, t0, true},
		{"exactly Budget, clock near the largest time", far, far.Add(Budget), true},
		{"a nanosecond short, clock near the largest time", far, far.Add(Budget - 1), false},
	} {
		c := &Calls{now: func() time.Time { return tc.now }}
		ctx, cancel := context.WithDeadline(context.Background(), tc.deadline)
		for _, take := range []func(context.Context) Ticket{c.Begin, c.Watch} {
			tk := take(ctx)
			if got := !c.Ignores(tk, context.DeadlineExceeded); got != tc.counts {
				t.Errorf("%s: ticket %#x counts %v, want %v", tc.name, tk, got, tc.counts)
			}
			// Cancelled, it never counts.
			if !c.Ignores(tk, context.Canceled) {
				t.Errorf("%s: ticket %#x counted when cancelled", tc.name, tk)
			}
		}
		cancel()
	}
}

// TestRepliedOnlyAfterBegun: Replied notes a reply for the calls begun
// before it, not for the ones after; a second Replied with no call begun
// since changes nothing.
func TestRepliedOnlyAfterBegun(t *testing.T) {
	c := &Calls{now: func() time.Time { return t0 }}
	ctx, cancel := context.WithDeadline(context.Background(), t0.Add(time.Second))
	defer cancel()
	a := c.Begin(ctx)
	c.Replied()
	r := c.replied.Load()
	c.Replied()
	if c.replied.Load() != r {
		t.Errorf("a second Replied with no call begun moved replied from %d to %d", r, c.replied.Load())
	}
	b := c.Begin(ctx)
	if !c.Ignores(a, context.DeadlineExceeded) || c.Ignores(b, context.DeadlineExceeded) {
		t.Errorf("a (before the reply) ignored %v, b (after) ignored %v; want true, false",
			c.Ignores(a, context.DeadlineExceeded), c.Ignores(b, context.DeadlineExceeded))
	}
}
