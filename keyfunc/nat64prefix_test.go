package keyfunc_test

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// The network-specific prefixes of RFC 6052 section 2.4's examples, one of
// each length, and the address each gives the global IPv4 address 1.2.3.4
// (worked by hand from the layout of section 2.2: the u-octet, bits
// 64..71, is skipped).
var nspCases = []struct {
	prefix, addr string
}{
	{"2001:db8::/32", "2001:db8:102:304::"},
	{"2001:db8:100::/40", "2001:db8:101:203:4::"},
	{"2001:db8:122::/48", "2001:db8:122:102:3:400::"},
	{"2001:db8:122:300::/56", "2001:db8:122:301:2:304::"},
	{"2001:db8:122:344::/64", "2001:db8:122:344:1:203:400:0"},
	{"2001:db8:122:344::/96", "2001:db8:122:344::102:304"},
}

// TestIPNAT64PrefixesKeyByEmbeddedIPv4: a translator with a
// network-specific prefix (RFC 6052) hands an IPv6-only service every IPv4
// client within that one prefix, a /96 of which is a single /64: grouped
// by /64 every IPv4 client behind the translator shared one bucket, and
// nothing could say otherwise. Declared with NAT64Prefixes, an address of
// the prefix is keyed as the IPv4 address it embeds, at whichever of the
// six lengths the prefix has.
func TestIPNAT64PrefixesKeyByEmbeddedIPv4(t *testing.T) {
	// The harm, undeclared: two IPv4 clients, one key.
	def := mustIP(t)
	a, _ := def(newReq("[2001:db8:122:344::102:304]:443"))
	b, _ := def(newReq("[2001:db8:122:344::506:708]:443"))
	if a != b {
		t.Fatalf("undeclared /96 translator: keys %q and %q; the test assumes they are shared", a, b)
	}
	for _, tc := range nspCases {
		f := mustIP(t, keyfunc.NAT64Prefixes(prefixes(tc.prefix)...))
		wantKey(t, f, newReq("["+tc.addr+"]:443"), "1.2.3.4", nil)
		// Grouped by IPv4Prefix as any IPv4 client.
		g := mustIP(t, keyfunc.NAT64Prefixes(prefixes(tc.prefix)...), keyfunc.IPv4Prefix(24))
		wantKey(t, g, newReq("["+tc.addr+"]:443"), "1.2.3.0/24", nil)
	}
	f := mustIP(t, keyfunc.NAT64Prefixes(prefixes("2001:db8:122:344::/96", "2001:db8:aaaa::/48")...))
	wantKey(t, f, newReq("[2001:db8:122:344::506:708]:443"), "5.6.7.8", nil)
	wantKey(t, f, newReq("[2001:db8:aaaa:506:7:800::]:443"), "5.6.7.8", nil)
	// Outside the prefixes: IPv6 addresses as before.
	wantKey(t, f, newReq("[2001:db8:122:345::102:304]:443"), "2001:db8:122:345::/64", nil)
	// Through a trusted proxy.
	p := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...), keyfunc.NAT64Prefixes(prefixes("2001:db8:122:344::/96")...))
	wantKey(t, p, newReq("10.0.0.1:80", xff, "2001:db8:122:344::102:304"), "1.2.3.4", nil)
	// The well-known prefix is still recognised beside declared ones.
	wantKey(t, f, newReq("[64:ff9b::102:304]:443"), "1.2.3.4", nil)
}

// TestIPNAT64PrefixesURule: below /96, bits 64..71 of an IPv4-embedded
// address are zero (RFC 6052 section 2.2); an address of the prefix with
// others there is no translated client and stays an IPv6 address, grouped.
func TestIPNAT64PrefixesURule(t *testing.T) {
	f := mustIP(t, keyfunc.NAT64Prefixes(prefixes("2001:db8:122::/48")...))
	wantKey(t, f, newReq("[2001:db8:122:102:ff03:400::]:443"), "2001:db8:122:102::/64", nil)
	wantKey(t, f, newReq("[2001:db8:122:102:103:400::]:443"), "2001:db8:122:102::/64", nil)
	g := mustIP(t, keyfunc.NAT64Prefixes(prefixes("2001:db8:122:344::/64")...))
	wantKey(t, g, newReq("[2001:db8:122:344:8001:203:400:0]:443"), "2001:db8:122:344::/64", nil)
}

// TestIPNAT64PrefixesNonGlobalIPv4: a network-specific prefix may carry a
// non-global IPv4 address (RFC 6052 section 3.1 forbids that to the
// well-known prefix only): a translator of an IPv4 realm of its own. Such
// a client is keyed apart, by its address alone, neither with every other
// client of the translator (its /64) nor as the private address, which a
// host of the server's own realm may hold. The suffix a translator leaves
// zero is not part of the key.
func TestIPNAT64PrefixesNonGlobalIPv4(t *testing.T) {
	f := mustIP(t, keyfunc.NAT64Prefixes(prefixes("2001:db8:122:344::/96", "2001:db8:aaaa::/48")...))
	wantKey(t, f, newReq("[2001:db8:122:344::a00:1]:443"), "2001:db8:122:344::a00:1", nil)
	wantKey(t, f, newReq("[2001:db8:122:344::a00:2]:443"), "2001:db8:122:344::a00:2", nil)
	// RFC 6052 section 2.4's example, 192.0.2.33 at /48, and with a suffix.
	wantKey(t, f, newReq("[2001:db8:aaaa:c000:2:2100::]:443"), "2001:db8:aaaa:c000:2:2100::", nil)
	wantKey(t, f, newReq("[2001:db8:aaaa:c000:2:2100:0:1]:443"), "2001:db8:aaaa:c000:2:2100::", nil)
	wantKey(t, f, newReq("[2001:db8:aaaa:102:3:400:0:1]:443"), "1.2.3.4", nil)
}

// TestIPLocalUseNAT64Prefix: 64:ff9b:1::/48 is set aside for local IPv4/IPv6
// translation (RFC 8215), at a length within it that the network chooses,
// so the IPv4 address cannot be read without NAT64Prefixes. But every
// address in it stands for one IPv4 client whatever the length (a
// translator writes the rest zero): undeclared, each is keyed by itself,
// not by its /64, which all the IPv4 clients of a /96 share. Declared, the
// prefix keys them as their IPv4 addresses.
func TestIPLocalUseNAT64Prefix(t *testing.T) {
	def := mustIP(t)
	wantKey(t, def, newReq("[64:ff9b:1::102:304]:443"), "64:ff9b:1::102:304", nil)
	wantKey(t, def, newReq("[64:ff9b:1::506:708]:443"), "64:ff9b:1::506:708", nil)
	wantKey(t, def, newReq("[64:ff9b:1:ffff:ffff:ffff:ffff:ffff]:443"), "64:ff9b:1:ffff:ffff:ffff:ffff:ffff", nil)
	wantKey(t, def, newReq("[64:ff9b:2::102:304]:443"), "64:ff9b:2::/64", nil)
	f := mustIP(t, keyfunc.NAT64Prefixes(prefixes("64:ff9b:1:abcd::/96")...))
	wantKey(t, f, newReq("[64:ff9b:1:abcd::102:304]:443"), "1.2.3.4", nil)
	wantKey(t, f, newReq("[64:ff9b:1::102:304]:443"), "64:ff9b:1::102:304", nil)
	g := mustIP(t, keyfunc.NAT64Prefixes(prefixes("64:ff9b:1::/48")...))
	wantKey(t, g, newReq("[64:ff9b:1:102:3:400::]:443"), "1.2.3.4", nil)
}

// TestIPNAT64PrefixesRefused: what NAT64Prefixes cannot mean is an error
// of IP naming the prefix.
func TestIPNAT64PrefixesRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []keyfunc.IPOption
		msg  string
	}{
		{"none", []keyfunc.IPOption{keyfunc.NAT64Prefixes()}, "NAT64Prefixes: no prefix given"},
		{"invalid", []keyfunc.IPOption{keyfunc.NAT64Prefixes(netip.Prefix{})}, "NAT64Prefixes: prefix 0 is invalid"},
		{"length", []keyfunc.IPOption{keyfunc.NAT64Prefixes(prefixes("2001:db8::/33")...)}, "NAT64Prefixes: prefix 0, 2001:db8::/33, is not 32, 40, 48, 56, 64 or 96 bits long (RFC 6052)"},
		{"128", []keyfunc.IPOption{keyfunc.NAT64Prefixes(prefixes("2001:db8::1/128")...)}, "NAT64Prefixes: prefix 0, 2001:db8::1/128, is not 32, 40, 48, 56, 64 or 96 bits long (RFC 6052)"},
		{"IPv4", []keyfunc.IPOption{keyfunc.NAT64Prefixes(prefixes("10.0.0.0/8")...)}, "NAT64Prefixes: prefix 0, 10.0.0.0/8, is not an IPv6 prefix"},
		{"mapped", []keyfunc.IPOption{keyfunc.NAT64Prefixes(prefixes("::ffff:0:0/96")...)}, "NAT64Prefixes: prefix 0, ::ffff:0.0.0.0/96, is not an IPv6 prefix"},
		{"host bits", []keyfunc.IPOption{keyfunc.NAT64Prefixes(prefixes("2001:db8:122:344::1/96")...)}, "NAT64Prefixes: prefix 0, 2001:db8:122:344::1/96, has bits set past its length"},
		{"overlap", []keyfunc.IPOption{keyfunc.NAT64Prefixes(prefixes("2001:db8:122::/48", "2001:db8:122:344::/96")...)}, "NAT64Prefixes: prefixes 0 and 1, 2001:db8:122::/48 and 2001:db8:122:344::/96, overlap: which one embeds the address would be ambiguous"},
		{"well-known", []keyfunc.IPOption{keyfunc.NAT64Prefixes(prefixes("64:ff9b::/32")...)}, "NAT64Prefixes: prefix 0, 64:ff9b::/32, overlaps the well-known prefix 64:ff9b::/96, which is always recognised"},
		{"twice", []keyfunc.IPOption{keyfunc.NAT64Prefixes(prefixes("2001:db8::/32")...), keyfunc.NAT64Prefixes(prefixes("2001:db9::/32")...)}, "NAT64Prefixes given more than once (list every translator prefix in one NAT64Prefixes)"},
	} {
		f, err := keyfunc.IP(tc.opts...)
		if f != nil || err == nil || !strings.Contains(err.Error(), "keyfunc: IP: "+tc.msg) {
			t.Errorf("%s: IP(...) = %v, %v; want nil and an error holding %q", tc.name, f != nil, err, "keyfunc: IP: "+tc.msg)
		}
	}
	// The well-known prefix itself is accepted, and changes nothing.
	f := mustIP(t, keyfunc.NAT64Prefixes(prefixes("64:ff9b::/96")...))
	wantKey(t, f, newReq("[64:ff9b::102:304]:443"), "1.2.3.4", nil)
	wantKey(t, f, newReq("[64:ff9b::a00:1]:443"), "64:ff9b::/64", nil)
	// A /96 prefix with its u-octet set, which RFC 6052 forbids but
	// translators accept, is accepted.
	u := mustIP(t, keyfunc.NAT64Prefixes(prefixes("2001:db8:122:344:ff00::/96")...))
	wantKey(t, u, newReq("[2001:db8:122:344:ff00::102:304]:443"), "1.2.3.4", nil)
	// The option's slice is copied.
	ps := prefixes("2001:db8:122:344::/96")
	g := mustIP(t, keyfunc.NAT64Prefixes(ps...))
	ps[0] = prefixes("2001:db8:999::/96")[0]
	wantKey(t, g, newReq("[2001:db8:122:344::102:304]:443"), "1.2.3.4", nil)
	if _, err := keyfunc.IP(keyfunc.NAT64Prefixes(prefixes("2001:db8::/33")...)); errors.Is(err, keyfunc.ErrNoKey) {
		t.Errorf("a configuration error matches ErrNoKey: %v", err)
	}
}

// TestIPNAT64PrefixAllocatesOnce: a translated client costs one allocation,
// the key's, like any IPv6 client.
func TestIPNAT64PrefixAllocatesOnce(t *testing.T) {
	f := mustIP(t, keyfunc.NAT64Prefixes(prefixes("2001:db8:aaaa::/48", "2001:db8:122:344::/96")...))
	for _, ra := range []string{"[2001:db8:122:344::102:304]:443", "[2001:db8:aaaa:102:3:400::]:443", "[2001:db8:122:344::a00:1]:443", "[64:ff9b:1::102:304]:443"} {
		r := newReq(ra)
		if got := testing.AllocsPerRun(100, func() { sinkKey, _ = f(r) }); got > 1 {
			t.Errorf("IP key of %s: %v allocations; want at most 1", ra, got)
		}
	}
}
