package adaptive_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/middleware/adaptive"
)

// panicOnce is a slog handler whose first record panics (a handler of
// the application's that fails), the next ones pass.
type panicOnce struct{ done bool }

func (h *panicOnce) Enabled(context.Context, slog.Level) bool { return true }
func (h *panicOnce) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *panicOnce) WithGroup(string) slog.Handler            { return h }
func (h *panicOnce) Handle(context.Context, slog.Record) error {
	if !h.done {
		h.done = true
		panic("handler panics")
	}
	return nil
}

// TestControllerLoggerPanicJudgesOnce: the Logger's handler runs as a
// period is judged; one that panics must not leave that period to be
// judged again: a slow and failing period lowers the level once (0.8),
// and the healthy one that follows raises it (0.9), not twice (0.64,
// then 0.74).
func TestControllerLoggerPanicJudgesOnce(t *testing.T) {
	m := newMiddleware(t, 100)
	c, clock := newController(t, m, adaptive.Config{Baseline: time.Millisecond, Logger: slog.New(&panicOnce{})})
	observe(c, 100, 10, 10*time.Millisecond)
	clock.Advance(time.Minute)
	func() {
		defer func() {
			if p := recover(); p != "handler panics" {
				t.Fatalf("Evaluate recovered %v, want the handler's panic", p)
			}
		}()
		c.Evaluate()
	}()
	if got := c.Level(); got != 0.8 {
		t.Fatalf("level %v after the handler panicked, want 0.8", got)
	}
	period(t, c, clock, 100, 0, time.Millisecond)
	if got, lim := c.Level(), limitsOf(m); got != 0.9 || lim != "90" {
		t.Errorf("after a healthy period: level %v, limit %s; want 0.9, 90", got, lim)
	}
}
