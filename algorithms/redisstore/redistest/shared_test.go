package redistest

import "testing"

// TestShared: one server for every caller until StopShared, which stops it
// and lets the next caller start another.
func TestShared(t *testing.T) {
	a, b := Shared(t), Shared(t)
	if a != b {
		t.Fatalf("Shared returned two servers (%p, %p)", a, b)
	}
	if got, err := a.Do("PING"); err != nil || got != "PONG" {
		t.Fatalf("PING = %q, %v", got, err)
	}
	StopShared()
	if _, err := a.Do("PING"); err == nil {
		t.Error("the shared server still answers after StopShared")
	}
	c := Shared(t)
	defer StopShared()
	if c == a {
		t.Error("Shared after StopShared returned the stopped server")
	}
	if got, err := c.Do("PING"); err != nil || got != "PONG" {
		t.Errorf("PING of the new shared server = %q, %v", got, err)
	}
}
