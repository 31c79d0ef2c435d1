package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// stepClock moves its time forward by every Sleep at once: with one worker
// the run is sequential, so its virtual times are exact.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return nil
}

func TestRun(t *testing.T) {
	var out strings.Builder
	clock := &stepClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	if err := run(&out, clock, 20, 1); err != nil {
		t.Fatal(err)
	}
	// The plain client's 20 calls come at one instant: the bucket of 5 serves
	// 5. The paced calls leave 200ms apart and are all served.
	want := "plain http.Client: 5 served, 15 refused with 429, in 0s\n" +
		"client.Transport:  20 served, 0 refused with 429, 0 retries, in 3.8s\n"
	if got := out.String(); got != want {
		t.Errorf("output\n%s\nwant\n%s", got, want)
	}
}

func TestRunErrors(t *testing.T) {
	if err := run(&strings.Builder{}, &stepClock{}, 0, 1); err == nil {
		t.Error("n = 0 accepted")
	}
}
