package keyfunc

import (
	"net/netip"
	"testing"
)

// FuzzParseIPv4Port checks the RemoteAddr fast path against netip: every
// string it accepts, ParseAddrPort accepts with the same address, written
// exactly as the text before the port; and it accepts every canonical
// "a.b.c.d:port" with a port of at most 5 digits.
func FuzzParseIPv4Port(f *testing.F) {
	for _, s := range []string{
		"192.0.2.1:1234", "0.0.0.0:0", "255.255.255.255:65535", "1.2.3.4:00080",
		"256.1.1.1:80", "01.2.3.4:80", "1.2.3.4:65536", "1.2.3.4:", "1.2.3.4",
		"1.2.3:80", "1.2.3.4.5:80", "1.2.3.4:80:80", "1.2.3.4:+80", "1.2.3.4:123456",
		"[::ffff:1.2.3.4]:80", "1234.1.1.1:80", "1.2.3.4567:80", "", ":", "1..3.4:80",
		"1.2.3.4 :80", "1.2.3.4:8 0", "0x1.2.3.4:80",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, n, ok := parseIPv4Port(s)
		ap, err := netip.ParseAddrPort(s)
		if ok {
			if err != nil || ap.Addr() != a || !a.Is4() || a.String() != s[:n] || s[n] != ':' {
				t.Fatalf("parseIPv4Port(%q) = %v, %d; ParseAddrPort: %v, %v", s, a, n, ap, err)
			}
			return
		}
		if err == nil && ap.Addr().Is4() && ap.Addr().String()+":" == s[:len(ap.Addr().String())+1] &&
			len(s)-len(ap.Addr().String())-1 <= 5 {
			t.Fatalf("parseIPv4Port(%q) rejected a canonical address and port", s)
		}
	})
}

// TestIPFastPathMatchesGeneralPath checks that the key of a canonical
// "a.b.c.d:port" RemoteAddr is what the general parse gives.
func TestIPFastPathMatchesGeneralPath(t *testing.T) {
	for _, s := range []string{"192.0.2.1:1234", "0.0.0.0:0", "10.20.30.40:65535", "1.2.3.4:007"} {
		a, n, ok := parseIPv4Port(s)
		if !ok {
			t.Fatalf("parseIPv4Port(%q) rejected", s)
		}
		ap, err := netip.ParseAddrPort(s)
		if err != nil || ap.Addr() != a || s[:n] != ap.Addr().String() {
			t.Fatalf("parseIPv4Port(%q) = %v, %q; ParseAddrPort: %v, %v", s, a, s[:n], ap, err)
		}
	}
}
