package algotest_test

import (
	"context"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

// Sleep is a step: the clock moves by the wait at once; a done context
// returns its error and leaves the clock where it was.
func TestClockSleep(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := algotest.NewClock(t0)
	if err := c.Sleep(context.Background(), 1500*time.Millisecond); err != nil {
		t.Fatalf("Sleep: %v", err)
	}
	if got, want := c.Now(), t0.Add(1500*time.Millisecond); !got.Equal(want) {
		t.Errorf("after Sleep(1.5s): %v, want %v", got, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, time.Hour); err != context.Canceled {
		t.Errorf("Sleep with a done context: %v, want context.Canceled", err)
	}
	if got, want := c.Now(), t0.Add(1500*time.Millisecond); !got.Equal(want) {
		t.Errorf("after a cancelled Sleep: %v, want %v", got, want)
	}
}
