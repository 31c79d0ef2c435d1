package middleware

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestSleepClientGoneFirst: a held request whose client left before its
// hold began is abandoned, however short the hold: never served because
// its timer happened to fire by the time the wait looked (a select between
// two ready cases picks at random).
func TestSleepClientGoneFirst(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	served := 0
	for range 1000 {
		if err := sleep(ctx, time.Nanosecond); err == nil {
			served++
		} else if !errors.Is(err, context.Canceled) {
			t.Fatalf("sleep = %v, want context.Canceled", err)
		}
	}
	if served > 0 {
		t.Errorf("%d of 1000 holds of a client gone before them ended served", served)
	}
}
