package keyfunc_test

import (
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestTrustedProxiesRefusesEveryAddress: a prefix of length 0 trusts every
// peer of its family as a proxy. With 0.0.0.0/0 every IPv4 hop is skipped,
// so a client that writes an IPv6 address into X-Forwarded-For (a new one
// each time) was that address, a fresh key per request: the limit was
// bypassed; ::/0 the same with IPv4 entries. Such a prefix is refused at
// construction, naming it.
func TestTrustedProxiesRefusesEveryAddress(t *testing.T) {
	for _, s := range []string{"0.0.0.0/0", "::/0", "::ffff:0:0/96"} {
		p := netip.MustParsePrefix(s)
		_, err := keyfunc.IP(keyfunc.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8"), p))
		if err == nil || !strings.Contains(err.Error(), "prefix 1 ("+p.String()+")") || !strings.Contains(err.Error(), "TrustedHops") {
			t.Errorf("IP(TrustedProxies(10.0.0.0/8, %s)) error = %v, want one naming prefix 1 (%s) and pointing to TrustedHops", s, err, s)
		}
	}
	// What it let through: a spoofed IPv6 entry behind 0.0.0.0/0 keyed
	// the request by the client's choice. With the prefix refused, the
	// narrowest prefix that does the job is accepted and keys by the
	// peer's view.
	f, err := keyfunc.IP(keyfunc.TrustedProxies(netip.MustParsePrefix("10.0.0.0/8")))
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.0.0.1:5000"
	r.Header.Set("X-Forwarded-For", "2001:db8::1, 203.0.113.9")
	if k, err := f(r); err != nil || k != "203.0.113.9" {
		t.Errorf("key = %q, %v; want 203.0.113.9", k, err)
	}
}
