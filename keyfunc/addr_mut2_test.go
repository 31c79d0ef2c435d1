package keyfunc_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestIP_MappedPrefixShorterThan96StaysIPv6: a prefix in mapped notation
// only becomes IPv4 when it lies within ::ffff:0:0/96. A /95 reaches past
// the mapped range, so it stays an IPv6 prefix: it trusts the IPv6 peers
// within it (::fffe:0:1 here) and no IPv4 peer, not even one whose mapped
// form it contains (failing safe: nothing is trusted that it does not name
// as IPv6). Written in mapped notation, a /95 has a bit set past its
// length (the last of ffff): IP refuses it (TestTrustedProxiesHostBitsRefused);
// masked, it is ::fffe:0:0/95.
func TestIP_MappedPrefixShorterThan96StaysIPv6(t *testing.T) {
	if _, err := keyfunc.IP(keyfunc.TrustedProxies(prefixes("::ffff:10.0.0.0/95")...)); err == nil {
		t.Error("::ffff:10.0.0.0/95: no error, want its bits past /95 refused")
	}
	f := mustIP(t, keyfunc.TrustedProxies(prefixes("::fffe:0:0/95")...))
	wantKey(t, f, newReq("[::fffe:0:1]:80", xff, "203.0.113.5"), "203.0.113.5", nil)
	wantKey(t, f, newReq("10.0.0.1:80", xff, "203.0.113.5"), "10.0.0.1", nil)
}

// TestIP_RemoteAddrLongZeroPaddedPort: a RemoteAddr of one colon goes
// whole to ParseAddrPort, which reads a port zero-padded to any length, so
// a "v4:port" longer than any forwarding-header entry (100 bytes) is still
// the address it names, under the trusted-proxy path as under the default.
func TestIP_RemoteAddrLongZeroPaddedPort(t *testing.T) {
	ra := "192.0.2.1:" + strings.Repeat("0", 100) + "80"
	wantKey(t, mustIP(t), newReq(ra), "192.0.2.1", nil)
	wantKey(t, mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...)), newReq(ra, xff, "203.0.113.5"), "192.0.2.1", nil)
}
