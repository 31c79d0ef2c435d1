package client_test

import (
	"testing"
	"time"
)

// TestBenchClockReadsRealTime checks that the Transport in the benchmarks
// reads the time as x/time/rate's Wait beside it does (time.Now), so that
// neither side is spared the clock read the other pays: only the wait is
// virtual.
func TestBenchClockReadsRealTime(t *testing.T) {
	c := &benchClock{}
	before := time.Now()
	got := c.Now()
	after := time.Now()
	if got.Before(before) || got.After(after) {
		t.Fatalf("benchClock.Now() = %v; want a reading of the real clock, between %v and %v", got, before, after)
	}
}
