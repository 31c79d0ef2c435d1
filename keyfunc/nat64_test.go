package keyfunc_test

import (
	"net/http/httptest"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// Behind a stateless translator (SIIT-DC, RFC 7755) an IPv6 server sees
// every IPv4 client as an address of the well-known prefix 64:ff9b::/96
// with the IPv4 address in its last 32 bits (RFC 6052). Grouped by /64 as
// IPv6, all of them shared one key: one bucket for every IPv4 client. They
// are keyed as the IPv4 addresses they carry, as IPv4-mapped ones are.
// (Global addresses: documentation ones, 192.0.2.0/24 and the like, are
// not global, and RFC 6052 section 3.1 forbids them in the prefix; see
// nat64_review_test.go.)
func TestIPKeyOfTranslatedIPv4(t *testing.T) {
	for _, tc := range []struct {
		name       string
		opts       []keyfunc.IPOption
		remoteAddr string
		want       string
	}{
		{"translated", nil, "[64:ff9b::102:304]:443", "1.2.3.4"},
		{"another translated", nil, "[64:ff9b::5db8:d822]:443", "93.184.216.34"},
		{"dotted form", nil, "[64:ff9b::9.9.9.9]:443", "9.9.9.9"},
		{"IPv4 prefix", []keyfunc.IPOption{keyfunc.IPv4Prefix(24)}, "[64:ff9b::102:304]:443", "1.2.3.0/24"},
		// The local-use prefix (RFC 8215): one translated client an
		// address, its IPv4 address unknown without NAT64Prefixes (see
		// nat64prefix_test.go).
		{"local-use prefix", nil, "[64:ff9b:1::102:304]:443", "64:ff9b:1::102:304"},
		// Not the well-known prefix: an IPv6 client, grouped by /64.
		{"near miss", nil, "[64:ff9b::1:102:304]:443", "64:ff9b::/64"},
		{"first byte differs", nil, "[164:ff9b::102:304]:443", "164:ff9b::/64"},
		{"second byte differs", nil, "[65:ff9b::102:304]:443", "65:ff9b::/64"},
		{"third byte differs", nil, "[64:fe9b::102:304]:443", "64:fe9b::/64"},
		{"fourth byte differs", nil, "[64:ff9c::102:304]:443", "64:ff9c::/64"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.remoteAddr
		got, err := keyfunc.Must(keyfunc.IP(tc.opts...))(r)
		if err != nil || got != tc.want {
			t.Errorf("%s: IP key of %s = %q, %v; want %q", tc.name, tc.remoteAddr, got, err, tc.want)
		}
	}
}
