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
	if err := run(&strings.Builder{}, algotest.NewClock(time.Time{}), 0, 1); err == nil {
		t.Error("n = 0 accepted")
	}
}
