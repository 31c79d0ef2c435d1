package client

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestSystemSleepDoneFirst: SystemClock's Sleep on a ctx done already
// returns ctx.Err(), however short d: never nil because its timer happened
// to fire by the time it looked (a select between two ready cases picks
// at random).
func TestSystemSleepDoneFirst(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	slept := 0
	for range 1000 {
		if err := SystemClock.Sleep(ctx, time.Nanosecond); err == nil {
			slept++
		} else if !errors.Is(err, context.Canceled) {
			t.Fatalf("Sleep = %v, want context.Canceled", err)
		}
	}
	if slept > 0 {
		t.Errorf("%d of 1000 Sleeps on a done ctx returned nil", slept)
	}
}
