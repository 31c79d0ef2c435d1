package main

import (
	"bufio"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/examples/internal/apptest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

func TestMain(m *testing.M) {
	apptest.Main(main)
	os.Exit(m.Run())
}

// TestMainBusyPort: a port in use, of either instance, ends the example
// with a message saying so and naming the flag of that instance, without
// first claiming that any instance listens.
func TestMainBusyPort(t *testing.T) {
	noRedis := closedAddr(t) // never the machine's Redis on 6379
	t.Run("a", func(t *testing.T) {
		apptest.CheckBusyPort(t, "-a", func(busy string) []string { return []string{"-redis", noRedis, "-a", busy, "-b", "127.0.0.1:0"} })
	})
	t.Run("b", func(t *testing.T) {
		apptest.CheckBusyPort(t, "-b", func(busy string) []string { return []string{"-redis", noRedis, "-a", "127.0.0.1:0", "-b", busy} })
	})
}

// TestMainBadAddr: a malformed -a or -b ("8080", a port alone) ends the
// example before serving, with a message naming the flag and the value;
// it was the net package's error alone ("listen tcp: address 8080:
// missing port in address").
func TestMainBadAddr(t *testing.T) {
	noRedis := closedAddr(t)
	t.Run("a", func(t *testing.T) {
		apptest.CheckBadAddr(t, "-a", func(bad string) []string { return []string{"-redis", noRedis, "-a", bad, "-b", "127.0.0.1:0"} })
	})
	t.Run("b", func(t *testing.T) {
		apptest.CheckBadAddr(t, "-b", func(bad string) []string { return []string{"-redis", noRedis, "-a", "127.0.0.1:0", "-b", bad} })
	})
}

// closedAddr returns an address where nothing listens: connections to it
// are refused.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
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

// TestMainSaysRedisIsDown: started before its Redis (the README's first
// step skipped), the example says at once, before serving, that Redis does
// not answer and that requests pass unlimited meanwhile: otherwise a user
// sees every request answered 200 and no sign of why.
func TestMainSaysRedisIsDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	noRedis := ln.Addr().String()
	ln.Close() // nothing listens there now: connections are refused
	cmd := apptest.Command(t, "-redis", noRedis, "-a", "127.0.0.1:0", "-b", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var log []string
	for {
		line, ok := hangguard.Await(t, onceFrom(lines), 20*time.Second, "no \"listening on\" logged")()
		if !ok {
			t.Fatalf("the example ended; log:\n%s", strings.Join(log, "\n"))
		}
		log = append(log, line)
		if strings.Contains(line, "listening on") {
			break
		}
	}
	for _, want := range []string{"Redis at " + noRedis + " does not answer within 1s", "fail open"} {
		if !strings.Contains(strings.Join(log, "\n"), want) {
			t.Errorf("the log before serving does not say %q:\n%s", want, strings.Join(log, "\n"))
		}
	}
	// Its own line says why, not only that the wait ran out.
	if i := slices.IndexFunc(log, func(l string) bool { return strings.Contains(l, "does not answer") }); i < 0 || !strings.Contains(log[i], "connection refused") {
		t.Errorf("the line that Redis does not answer does not say the connection was refused:\n%s", strings.Join(log, "\n"))
	}
}

// onceFrom returns a channel giving a function that returns the next line
// of lines and whether there was one.
func onceFrom(lines <-chan string) <-chan func() (string, bool) {
	c := make(chan func() (string, bool), 1)
	go func() { s, ok := <-lines; c <- func() (string, bool) { return s, ok } }()
	return c
}

// TestMainBadRedisAddr: a malformed -redis ("6390", the port alone, as
// redis-server --port takes it) ends the example before serving, with a
// message naming -redis and the value. It was accepted: the instances
// served, failing open on every request, and the log said Redis "does not
// answer ... until it does", which it never would.
func TestMainBadRedisAddr(t *testing.T) {
	apptest.CheckBadAddr(t, "-redis", func(bad string) []string { return []string{"-redis", bad, "-a", "127.0.0.1:0", "-b", "127.0.0.1:0"} })
}
