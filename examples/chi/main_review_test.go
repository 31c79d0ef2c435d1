package main

import (
	"os"
	"testing"

	"github.com/ratekeeper/ratekeeper/examples/internal/apptest"
)

func TestMain(m *testing.M) {
	apptest.Main(main)
	os.Exit(m.Run())
}

// TestMainBusyPort: a port in use ends the example with a message saying
// so and naming -addr, without first claiming to listen.
func TestMainBusyPort(t *testing.T) {
	apptest.CheckBusyPort(t, "-addr", func(busy string) []string { return []string{"-addr", busy} })
}

// TestMainBadAddr: a malformed -addr ("8080", a port alone) ends the
// example before serving, with a message naming -addr and the value; it
// was the net package's error alone ("listen tcp: address 8080: missing
// port in address").
func TestMainBadAddr(t *testing.T) {
	apptest.CheckBadAddr(t, "-addr", func(bad string) []string { return []string{"-addr", bad} })
}

// TestMainStopsOnSignal: the example logs the address it got, serves, and
// stops on SIGTERM or Ctrl-C (SIGINT), saying so, with exit status 0.
func TestMainStopsOnSignal(t *testing.T) {
	apptest.CheckStopsOnSignal(t, 1, "-addr", "127.0.0.1:0")
}

// TestMainArgument: "-addr 127.0.0.1:0 8081" is refused, not served on
// 127.0.0.1:0 as if the argument had not been given.
func TestMainArgument(t *testing.T) {
	apptest.CheckArgumentRefused(t, "-addr", "127.0.0.1:0", "8081")
}
