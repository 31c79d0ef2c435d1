package keyfunc_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestTrustedProxiesHostBitsRefused: a trusted prefix with bits set past
// its length (10.0.0.5/16, an interface's address as `ip addr` shows it)
// is an error of IP naming both readings, as the config file's
// trusted_proxies refuses it: masked silently, it trusted every host of
// the network to name any client in X-Forwarded-For. The IPv4-mapped
// form is refused alike; a prefix without host bits, or a lone address,
// is not.
func TestTrustedProxiesHostBitsRefused(t *testing.T) {
	for _, tc := range []struct{ prefix, want string }{
		{"10.0.0.5/16", "10.0.0.5/32"},
		{"::ffff:10.0.0.5/112", "10.0.0.5/32"},
		{"2001:db8::5/64", "2001:db8::5/128"},
	} {
		_, err := keyfunc.IP(keyfunc.TrustedProxies(netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix(tc.prefix)))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "prefix 1") {
			t.Errorf("TrustedProxies(.., %s): err %v; want an error naming prefix 1 and %s", tc.prefix, err, tc.want)
		}
	}
	for _, ok := range []string{"10.0.0.0/16", "10.0.0.5/32", "::ffff:10.0.0.0/112", "2001:db8::/64"} {
		if _, err := keyfunc.IP(keyfunc.TrustedProxies(netip.MustParsePrefix(ok))); err != nil {
			t.Errorf("TrustedProxies(%s): %v", ok, err)
		}
	}
}
