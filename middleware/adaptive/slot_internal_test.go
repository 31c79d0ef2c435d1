package adaptive

import (
	"math"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestSlotOf: the slot of a Duration since origin holds it and is size
// long, but cut short at either end of the int64s: negative Durations (a
// clock set back before origin) included, where the end of a slot once
// overflowed to math.MaxInt64.
func TestSlotOf(t *testing.T) {
	for _, tc := range []struct{ at, size, from, until int64 }{
		{0, 4, 0, 4},
		{5, 4, 4, 8},
		{-1, 4, -4, 0},
		{-4, 4, -4, 0},
		{-5, 4, -8, -4},
		{-5, 1, -5, -4},
		{math.MinInt64, 3, math.MinInt64, math.MinInt64 + 3},
		{math.MinInt64 + 1, 3, math.MinInt64, math.MinInt64 + 3},
		{math.MaxInt64 - 1, 3, math.MaxInt64 - 1, math.MaxInt64},
		{math.MaxInt64 - 2, 1 << 62, 1 << 62, math.MaxInt64},
	} {
		from, until := slotOf(tc.at, tc.size)
		if from != tc.from || until != tc.until {
			t.Errorf("slotOf(%d, %d) = [%d, %d), want [%d, %d)", tc.at, tc.size, from, until, tc.from, tc.until)
		}
	}
}

// TestFirstOver: the first period end after at (every period past it) by
// which more than over has passed since last, without overflow.
func TestFirstOver(t *testing.T) {
	for _, tc := range []struct {
		at, last     int64
		over, period time.Duration
		want         int64
	}{
		{100, 0, 99, 10, 1},  // already over at at
		{100, 0, 100, 10, 1}, // 110 − 0 > 100
		{100, 0, 110, 10, 2}, // not more than at 110
		{100, 0, 111, 10, 2},
		{100, 100, 0, 10, 1},
		{100, 150, 20, 10, 8}, // 100 + 80 − 150 = 30 > 20
		{math.MinInt64, math.MaxInt64, math.MaxInt64, 1, math.MaxInt64},
		{0, math.MaxInt64, 0, 1, math.MaxInt64},
		{0, math.MaxInt64 - 1, 0, 2, math.MaxInt64/2 + 1},
	} {
		if got := firstOver(tc.at, tc.last, tc.over, tc.period); got != tc.want {
			t.Errorf("firstOver(%d, %d, %v, %v) = %d, want %d", tc.at, tc.last, tc.over, tc.period, got, tc.want)
		}
	}
}

// nopTarget is a Target with no policies.
type nopTarget struct{}

func (nopTarget) Set() *policy.Set                        { return nil }
func (nopTarget) Configured(string) *policy.Policy        { return nil }
func (nopTarget) SetLimit(name string, limit int64) error { return nil }

// TestBeginOnADroppedSlot: a Begin that loaded the slot in course just
// before another made the next one and an evaluation dropped it (none in
// flight there yet) must count its request in a slot still counted: it
// added to the dropped one, and the request was never seen in flight.
func TestBeginOnADroppedSlot(t *testing.T) {
	clock := algotest.NewClock(time.Unix(1_700_000_000, 0))
	c, err := New(nopTarget{}, Config{Clock: clock, Period: 16 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	old := c.cur.Load()
	c.slot(old.until) // the next slot, made by another Begin
	c.mu.Lock()
	c.inFlightOver(time.Nanosecond, 0) // an evaluation drops old, empty
	c.mu.Unlock()
	// The first Begin, which loaded old before all that, goes on.
	c.enter(old, old.from)
	var n int64
	for _, f := range c.flights {
		n += f.n.Load()
	}
	if n != 1 {
		t.Errorf("%d requests in flight in the slots counted, want 1", n)
	}
}
