package main

import (
	"net"
	"os"
	"testing"

	"github.com/ratekeeper/ratekeeper/examples/internal/apptest"
)

func TestMain(m *testing.M) {
	apptest.Main(main)
	os.Exit(m.Run())
}

// TestMainBusyPort: a port in use, of either instance, ends the example
// with a message saying so and naming the flag of that instance, without
// first claiming that any instance listens.
func TestMainBusyPort(t *testing.T) {
	t.Run("a", func(t *testing.T) {
		apptest.CheckBusyPort(t, "-a", func(busy string) []string { return []string{"-a", busy, "-b", "127.0.0.1:0"} })
	})
	t.Run("b", func(t *testing.T) {
		apptest.CheckBusyPort(t, "-b", func(busy string) []string { return []string{"-a", "127.0.0.1:0", "-b", busy} })
	})
}

// TestMainStopsOnSignal: both instances log the address they got and
// serve (failing open: the Redis address given refuses connections), and
// the example stops on SIGTERM or Ctrl-C (SIGINT), saying so, with exit
// status 0.
func TestMainStopsOnSignal(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	noRedis := ln.Addr().String()
	ln.Close() // nothing listens there now: connections are refused
	apptest.CheckStopsOnSignal(t, 2, "-redis", noRedis, "-a", "127.0.0.1:0", "-b", "127.0.0.1:0")
}

// TestMainArgument: a Redis address given as an argument is refused, not
// ignored for the default -redis 127.0.0.1:6379 (a Redis the user may run
// for something else).
func TestMainArgument(t *testing.T) {
	apptest.CheckArgumentRefused(t, "-a", "127.0.0.1:0", "-b", "127.0.0.1:0", "127.0.0.1:6390")
}
