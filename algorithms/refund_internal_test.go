package algorithms

import (
	"math"
	"testing"
	"time"
)

// TestRefundQueueWideRem: remaining waits whose double passes MaxInt64
// are compared exactly: a wait of MaxInt64 recognises the last place of a
// queue whose departure is beyond 2^62 ns, and one of MinInt64+1 none.
func TestRefundQueueWideRem(t *testing.T) {
	p := newParams(Spec{Algorithm: LeakyQueue, Limit: 1, Window: 24 * time.Hour, MaxDelay: 24 * time.Hour})
	w := p.window
	const t0 = 0
	// Two places; the last departs at 24 h, the queue free at 48 h.
	c := p.advance(p.advance(cell{t: t0}, t0, 1), t0, 1)
	if got, ok := p.refundQueue(c, t0, 1, math.MaxInt64); got != (cell{t: t0 + w}) || !ok {
		t.Errorf("refund with rem MaxInt64: %+v (given %v), want the queue free at %d, given", got, ok, t0+w)
	}
	if got, ok := p.refundQueue(c, t0, 1, math.MinInt64+1); got != c || ok {
		t.Errorf("refund with rem MinInt64+1: %+v (given %v), want %+v kept", got, ok, c)
	}
	// A queue from a clock stepped back 200 years: its last place departs
	// 2^62.6 ns after t, which a rem of MaxInt64 still reaches.
	far := cell{t: t0 + 1<<62 + 3<<60}
	if got, ok := p.refundQueue(far, t0, 1, math.MaxInt64); got.t != far.t-w || !ok {
		t.Errorf("refund of a far queue with rem MaxInt64: %+v (given %v), want moved back by %d", got, ok, w)
	}
}
