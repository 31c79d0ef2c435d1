package algorithms_test

import (
	"errors"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
)

// TestMemoryStoreCloseFailsEveryCallThatCanFail pins Close's
// documentation: after it, every method that returns an error returns
// ErrClosed and changes nothing, while Len and Sweep still answer (the keys
// are kept, not dropped).
func TestMemoryStoreCloseFailsEveryCallThatCanFail(t *testing.T) {
	s, clk := newStore(t)
	c := algorithms.Check{Spec: perSecond, Key: "k"}
	take(t, s, c)
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	checks := []algorithms.Check{c}
	pair := []algorithms.Check{c, {Spec: perSecond, Key: "other"}}
	admitted := []algorithms.Decision{{Allowed: true}}
	for name, call := range map[string]func() error{
		"TakeOne":     func() error { _, err := s.TakeOne(ctx, c); return err },
		"Take":        func() error { _, err := s.Take(ctx, pair...); return err },
		"TakeInto(1)": func() error { return s.TakeInto(ctx, make([]algorithms.Decision, 1), checks) },
		"TakeInto(2)": func() error { return s.TakeInto(ctx, make([]algorithms.Decision, 2), pair) },
		"Peek":        func() error { return s.Peek(ctx, make([]algorithms.Decision, 1), checks) },
		"Refund":      func() error { return s.Refund(ctx, make([]algorithms.Refunded, 1), checks, admitted, 0) },
		"GiveBack":    func() error { return s.GiveBack(ctx, make([]algorithms.Refunded, 1), checks, admitted, 0) },
		"Reset":       func() error { return s.Reset(ctx, c) },
	} {
		if err := call(); !errors.Is(err, algorithms.ErrClosed) {
			t.Errorf("%s after Close = %v, want ErrClosed", name, err)
		}
	}
	if n := s.Len(); n != 1 {
		t.Errorf("Len() after Close = %d, want the 1 key held", n)
	}
	clk.Advance(perSecond.Window)
	if n := s.Sweep(); n != 1 || s.Len() != 0 {
		t.Errorf("Sweep() after Close, the key idle: dropped %d, Len() = %d; want 1 and 0", n, s.Len())
	}
}
