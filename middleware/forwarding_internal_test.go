package middleware

import "testing"

// TestObfuscatedPort: only an IPv4 address or a bracketed IPv6 one with a
// well-formed obfuscated port is taken as a RemoteAddr rewritten further
// out; a real port, an unbracketed IPv6 address, an empty or malformed
// obfuscated port, or a node that is no address is not.
func TestObfuscatedPort(t *testing.T) {
	for _, tc := range []struct {
		remoteAddr string
		want       bool
	}{
		{"192.0.2.7:_hidden", true},
		{"[2001:db8::1]:_p.1-x_Y", true},
		{"[::ffff:192.0.2.7]:_p", true},
		{"[fe80::1%eth0]:_p", true},
		{"192.0.2.7:4711", false},
		{"[2001:db8::1]:4711", false},
		{"2001:db8::1:_p", false},
		{"192.0.2.7:_", false},
		{"192.0.2.7:_a b", false},
		{"192.0.2.7:_a:", false},
		{"_hidden:_p", false},
		{"[192.0.2.7]:_p", false},
		{"unknown:_p", false},
		{":_p", false},
		{"", false},
	} {
		if got := obfuscatedPort(tc.remoteAddr); got != tc.want {
			t.Errorf("obfuscatedPort(%q) = %v, want %v", tc.remoteAddr, got, tc.want)
		}
	}
}
