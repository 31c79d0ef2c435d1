package main

import (
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/algorithms/algotest"
)

func TestRun(t *testing.T) {
	var out strings.Builder
	clock := algotest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if err := run(&out, clock, 20, 1, time.Minute); err != nil {
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
	if err := run(&strings.Builder{}, algotest.NewClock(time.Time{}), 0, 1, time.Minute); err == nil {
		t.Error("n = 0 accepted")
	}
}

// TestRunCountsCallsPastMaxWait: a call whose turn in the Transport's
// queue is further away than the maximum wait fails at once
// (*client.WaitError); the example counts those calls and reports them
// beside the others. It stopped instead, logging the first such error
// and nothing of the calls served: "go run ./examples/client -n 320
// -workers 320" (the last calls' turns over a minute away) ended after a
// minute with exit status 1 and no summary. Here the maximum wait is
// below the 200ms between turns: the first call is served, the others
// (the clock not moving, as no call waits) all fail at once.
func TestRunCountsCallsPastMaxWait(t *testing.T) {
	var out strings.Builder
	clock := algotest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if err := run(&out, clock, 5, 1, 100*time.Millisecond); err != nil {
		t.Fatalf("run with calls past the maximum wait: %v, want their count reported", err)
	}
	want := "plain http.Client: 5 served, 0 refused with 429, in 0s\n" +
		"client.Transport:  1 served, 0 refused with 429, 0 retries, 4 failed at once (turn more than 100ms away), in 0s\n"
	if got := out.String(); got != want {
		t.Errorf("output\n%s\nwant\n%s", got, want)
	}
}
