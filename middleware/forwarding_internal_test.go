package middleware

import (
	"net/http/httptest"
	"testing"
)

// TestRewrittenRemoteAddr: a RemoteAddr a middleware further out rewrote
// to the client's address, with no port or an obfuscated one (an IPv4
// address or a bracketed IPv6 one, a well-formed obfuscated port), is
// taken as rewritten; the "host:port" net/http writes, an unbracketed
// IPv6 address with an obfuscated port, an empty or malformed one, or a
// node that is no address is not.
func TestRewrittenRemoteAddr(t *testing.T) {
	for _, tc := range []struct {
		remoteAddr string
		want       bool
	}{
		{"192.0.2.7", true},
		{"2001:db8::1", true},
		{"[2001:db8::1]", true},
		{"fe80::1%eth0", true},
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
		{"@", false},
		{"", false},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.remoteAddr
		if got := rewrittenRemoteAddr(r); got != tc.want {
			t.Errorf("rewrittenRemoteAddr(%q) = %v, want %v", tc.remoteAddr, got, tc.want)
		}
	}
}
