package keyfunc

import (
	"net/http/httptest"
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
	for _, s := range []string{"192.0.2.1:1234", "0.0.0.0:0", "10.20.30.40:65535", "1.2.3.4:007", "1.2.3.4:99"} {
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

// TestIPWalkErrors pins which error an unusable chain gives: no header at
// all, fewer entries than TrustedHops, or only trusted proxies.
func TestIPWalkErrors(t *testing.T) {
	hops := Must(IP(TrustedHops(2)))
	proxies := Must(IP(TrustedProxies(netip.MustParsePrefix("10.0.0.0/8"))))
	for _, tc := range []struct {
		name string
		f    Func
		xff  []string
		want error
	}{
		{"hops, no header", hops, nil, errNoHeader},
		{"hops, short chain", hops, []string{"192.0.2.1"}, errShortChain},
		{"proxies, no header", proxies, nil, errNoHeader},
		{"proxies, all trusted", proxies, []string{"10.0.0.2"}, errAllTrusted},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = "10.0.0.1:1"
		r.Header["X-Forwarded-For"] = tc.xff
		if _, err := tc.f(r); err != tc.want {
			t.Errorf("%s: error %v; want %v", tc.name, err, tc.want)
		}
	}
}
