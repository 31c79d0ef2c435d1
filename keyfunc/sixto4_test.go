package keyfunc_test

import (
	"net/netip"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// sixto4 returns an address of the 6to4 prefix 2002::/16 (RFC 3056) that
// embeds the IPv4 address v4 in bits 16..47, with subnet and interface
// identifier as given: the site's /48 is 2002:v4::/48.
func sixto4(v4 string, subnet uint16, iid uint64) string {
	b := netip.MustParseAddr(v4).As4()
	var a [16]byte
	a[0], a[1] = 0x20, 0x02
	copy(a[2:6], b[:])
	a[6], a[7] = byte(subnet>>8), byte(subnet)
	for i := 0; i < 8; i++ {
		a[15-i] = byte(iid >> (8 * i))
	}
	return netip.AddrFrom16(a).String()
}

// TestIPKeyOf6to4: a host behind a 6to4 router holds the whole /48
// 2002:<its IPv4>::/48 by virtue of its one IPv4 address (RFC 3056), so
// keyed by /64 it had 65,536 buckets to rotate through, where the same
// host over IPv4 has one. A 6to4 address whose embedded IPv4 address is
// global is keyed as that address (grouped by IPv4Prefix), every subnet of
// the /48 alike, as a translated client of 64:ff9b::/96 is; one embedding
// a non-global IPv4 address (RFC 3056 section 2 requires a global one) is
// no 6to4 site and stays an IPv6 address.
func TestIPKeyOf6to4(t *testing.T) {
	def := mustIP(t)
	for _, tc := range []struct {
		v4     string
		subnet uint16
		iid    uint64
	}{
		{"1.2.3.4", 0, 1},
		{"1.2.3.4", 1, 1},
		{"1.2.3.4", 0xffff, 0xdeadbeef},
		{"93.184.216.34", 0x1234, 0x0200_5eff_fe00_5301},
		{"192.88.99.1", 7, 7},
	} {
		a := sixto4(tc.v4, tc.subnet, tc.iid)
		wantKey(t, def, newReq("["+a+"]:443"), tc.v4, nil)
	}
	// The /48's subnets share one key, and it is the host's IPv4 key.
	wantKey(t, def, newReq("1.2.3.4:443"), "1.2.3.4", nil)
	wantKey(t, mustIP(t, keyfunc.IPv4Prefix(24)), newReq("["+sixto4("1.2.3.4", 9, 9)+"]:443"), "1.2.3.0/24", nil)
	wantKey(t, mustIP(t, keyfunc.IPv6Prefix(128)), newReq("["+sixto4("1.2.3.4", 9, 9)+"]:443"), "1.2.3.4", nil)
	// Through a trusted proxy too.
	proxied := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...))
	wantKey(t, proxied, newReq("10.0.0.1:80", xff, sixto4("1.2.3.4", 3, 3)), "1.2.3.4", nil)

	// Non-global IPv4 addresses: no 6to4 site; the IPv6 address grouped.
	for _, v4 := range []string{"10.0.0.1", "127.0.0.1", "192.168.1.1", "198.51.100.7", "224.0.0.1", "0.0.0.0"} {
		a := sixto4(v4, 5, 1)
		p := netip.PrefixFrom(netip.MustParseAddr(a), 64).Masked().String()
		wantKey(t, def, newReq("["+a+"]:443"), p, nil)
	}
	// Near misses of 2002::/16 are IPv6 addresses.
	for _, a := range []string{"2003:102:304::1", "2102:102:304::1", "2001:102:304::1"} {
		p := netip.PrefixFrom(netip.MustParseAddr(a), 64).Masked().String()
		wantKey(t, def, newReq("["+a+"]:443"), p, nil)
	}
}
