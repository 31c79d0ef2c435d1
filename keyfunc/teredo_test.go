package keyfunc_test

import (
	"net/netip"
	"testing"
)

// teredo returns a Teredo address (2001::/32, RFC 4380) of a client whose
// NAT maps it to v4:port, served by the Teredo server at server: bits
// 32..63 the server, 64..79 the flags, 80..95 and 96..127 the port and
// the client's address, each inverted (obfuscated).
func teredo(server, v4 string, flags, port uint16) string {
	s := netip.MustParseAddr(server).As4()
	c := netip.MustParseAddr(v4).As4()
	var a [16]byte
	a[0], a[1] = 0x20, 0x01
	copy(a[4:8], s[:])
	a[8], a[9] = byte(flags>>8), byte(flags)
	a[10], a[11] = ^byte(port>>8), ^byte(port)
	for i := range c {
		a[12+i] = ^c[i]
	}
	return netip.AddrFrom16(a).String()
}

// TestIPKeyOfTeredo: every client of a Teredo server has an address of the
// /64 2001:0:<server>::/64 (RFC 4380), the client's own NAT address and
// port being in the lower 64 bits, so grouped by /64 all of them shared
// one bucket, which any of them could exhaust. A Teredo client is keyed as
// the global IPv4 address its NAT maps it to, the address it reaches the
// server from over IPv4, whatever its server, flags or port; one naming a
// non-global address (no NAT on the internet maps to one) stays an IPv6
// address.
func TestIPKeyOfTeredo(t *testing.T) {
	def := mustIP(t)
	for _, tc := range []struct {
		server, v4  string
		flags, port uint16
	}{
		{"65.54.227.120", "1.2.3.4", 0x8000, 40000},
		{"65.54.227.120", "1.2.3.4", 0, 1},
		{"94.245.121.253", "1.2.3.4", 0x8000, 5555},
		{"65.54.227.120", "93.184.216.34", 0x8000, 40000},
	} {
		a := teredo(tc.server, tc.v4, tc.flags, tc.port)
		wantKey(t, def, newReq("["+a+"]:443"), tc.v4, nil)
	}
	for _, v4 := range []string{"10.0.0.1", "192.168.0.1", "127.0.0.1", "255.255.255.255"} {
		a := teredo("65.54.227.120", v4, 0x8000, 40000)
		p := netip.PrefixFrom(netip.MustParseAddr(a), 64).Masked().String()
		wantKey(t, def, newReq("["+a+"]:443"), p, nil)
	}
	// Not 2001::/32: an IPv6 address.
	wantKey(t, def, newReq("[2001:1:4136:e378:8000:63bf:fefd:fcfb]:443"), "2001:1:4136:e378::/64", nil)
}
