package keyfunc

import "testing"

// TestParseIPv4PortPortDigits: the fast path takes a port of 1 to 5
// digits, as its comment says; a longer one, even one ParseAddrPort reads
// as a valid port ("000080"), is left to the general path.
func TestParseIPv4PortPortDigits(t *testing.T) {
	for _, tt := range []struct {
		s  string
		ok bool
	}{
		{"192.0.2.1:8", true},
		{"192.0.2.1:00080", true},
		{"192.0.2.1:000080", false},
		{"192.0.2.1:", false},
	} {
		_, n, ok := parseIPv4Port(tt.s)
		if ok != tt.ok || ok && n != 9 {
			t.Errorf("parseIPv4Port(%q) = _, %d, %v; want ok %v (n 9)", tt.s, n, ok, tt.ok)
		}
	}
}
