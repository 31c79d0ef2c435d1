package redistest

import (
	"strings"
	"testing"
)

// TestStartOnAPortAnotherServerHolds: the port freePort found may be taken
// by another process (another test binary's server) before this server
// binds it; the server then exits at start. Start must not take the other
// server's PONG for its own: it would hand its caller a Server whose Addr
// is a server it did not start (the package says it never touches one),
// and tests would write to, or flush, someone else's Redis. (Before the
// fix start returned nil here: the first PING reached the other server
// before this one had failed to bind.)
func TestStartOnAPortAnotherServerHolds(t *testing.T) {
	other := New(t)
	bin := Require(t)
	s := &Server{Addr: other.Addr, Port: other.Port, bin: bin, dir: t.TempDir()}
	err := s.start()
	if err == nil {
		_ = s.Stop()
		t.Fatalf("start on the port of another running server returned no error; its Addr %s is that server", s.Addr)
	}
	if !strings.Contains(err.Error(), "exited at start") {
		t.Errorf("start on a taken port: %v, want the exit at start reported", err)
	}
	// The other server was left alone.
	if got, err := other.Do("PING"); err != nil || got != "PONG" {
		t.Fatalf("the other server after the attempt: PING = %q, %v", got, err)
	}
}

// TestRestartOnAPortTakenMeanwhile: Restart starts the server again on its
// port; when another server took the port after Stop, Restart fails
// rather than return with Addr pointing at that server.
func TestRestartOnAPortTakenMeanwhile(t *testing.T) {
	s := New(t)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	taker := &Server{Addr: s.Addr, Port: s.Port, bin: s.bin, dir: t.TempDir()}
	if err := taker.start(); err != nil {
		t.Skipf("could not take the freed port %d for the test: %v", s.Port, err)
	}
	t.Cleanup(func() { _ = taker.Stop() })
	if _, err := taker.Do("SET", "taker", "1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(); err == nil {
		t.Fatalf("Restart on port %d, which another server holds, returned no error", s.Port)
	}
	if got, err := taker.Do("GET", "taker"); err != nil || got != "1" {
		t.Fatalf("the server holding the port after the Restart: GET taker = %q, %v; want it untouched", got, err)
	}
}
