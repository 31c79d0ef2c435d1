package keyfunc_test

import (
	"net/netip"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// nat64 returns the address of the well-known prefix 64:ff9b::/96 that
// embeds the IPv4 address v4 (RFC 6052), in its canonical text.
func nat64(v4 string) string {
	b := netip.MustParseAddr(v4).As4()
	var a [16]byte
	a[1], a[2], a[3] = 0x64, 0xff, 0x9b
	copy(a[12:], b[:])
	return netip.AddrFrom16(a).String()
}

// TestIPKeyOfWellKnownPrefixWithNonGlobalIPv4: RFC 6052 section 3.1
// forbids the well-known prefix 64:ff9b::/96 for non-global IPv4 addresses
// (private, loopback, link-local, shared, documentation, benchmarking,
// multicast, reserved: RFC 5735 section 3, the IANA special-purpose
// registry's "not globally reachable"), and a translator must drop such
// packets: no translated IPv4 client has one. 64:ff9b::a00:1 was keyed
// "10.0.0.1", the key of the real private client or proxy at 10.0.0.1. It
// is an IPv6 address and is keyed as one, by its prefix; an address
// embedding a global IPv4 is still keyed as that IPv4. Each range is
// probed at its first and last address and just outside.
func TestIPKeyOfWellKnownPrefixWithNonGlobalIPv4(t *testing.T) {
	f := mustIP(t, keyfunc.IPv6Prefix(128))
	grouped := mustIP(t)
	for _, v4 := range []string{
		"0.0.0.0", "0.255.255.255", // "this" network
		"10.0.0.0", "10.0.0.1", "10.255.255.255", // private
		"100.64.0.0", "100.127.255.255", // shared (carrier-grade NAT)
		"127.0.0.0", "127.0.0.1", "127.255.255.255", // loopback
		"169.254.0.0", "169.254.255.255", // link-local
		"172.16.0.0", "172.31.255.255", // private
		"192.0.0.0", "192.0.0.8", "192.0.0.11", "192.0.0.170", "192.0.0.255", // IETF protocol assignments
		"192.0.2.0", "192.0.2.255", // documentation
		"192.168.0.0", "192.168.255.255", // private
		"198.18.0.0", "198.19.255.255", // benchmarking
		"198.51.100.0", "198.51.100.255", // documentation
		"203.0.113.0", "203.0.113.255", // documentation
		"224.0.0.0", "239.255.255.255", // multicast: never a source
		"240.0.0.0", "255.255.255.254", "255.255.255.255", // reserved, broadcast
	} {
		a := nat64(v4)
		got, err := f(newReq("[" + a + "]:443"))
		if err != nil || got != a {
			t.Errorf("key of %s (embedding non-global %s) = %q, %v; want the IPv6 address %q", a, v4, got, err, a)
		}
		got, err = grouped(newReq("[" + a + "]:443"))
		if err != nil || got != "64:ff9b::/64" {
			t.Errorf("default key of %s (embedding non-global %s) = %q, %v; want its /64, \"64:ff9b::/64\"", a, v4, got, err)
		}
	}
	for _, v4 := range []string{
		"1.0.0.0", "1.2.3.4", "9.255.255.255", "11.0.0.0",
		"100.63.255.255", "100.128.0.0",
		"126.255.255.255", "128.0.0.0",
		"169.253.255.255", "169.255.0.0",
		"172.15.255.255", "172.32.0.0",
		"191.255.255.255", "192.0.0.9", "192.0.0.10", "192.0.1.0", "192.0.3.0", // 192.0.0.9 and .10 are globally reachable anycast
		"192.88.99.1", "192.167.255.255", "192.169.0.0",
		"198.17.255.255", "198.20.0.0",
		"198.51.99.255", "198.51.101.0",
		"203.0.112.255", "203.0.114.0",
		"223.255.255.255",
	} {
		a := nat64(v4)
		got, err := f(newReq("[" + a + "]:443"))
		if err != nil || got != v4 {
			t.Errorf("key of %s (embedding global %s) = %q, %v; want %q", a, v4, got, err, v4)
		}
	}
}

// TestIPWellKnownPrefixWithPrivateIPv4IsNotThePrivateClient: the harm.
// A client at 64:ff9b::a00:1 shared the key of the private client, or the
// proxy, at 10.0.0.1; here a client behind that very proxy took its key.
func TestIPWellKnownPrefixWithPrivateIPv4IsNotThePrivateClient(t *testing.T) {
	direct := mustIP(t)
	proxied := mustIP(t, keyfunc.TrustedProxies(prefixes("10.0.0.0/8")...))
	private, _ := direct(newReq("10.0.0.1:80"))
	if got, err := direct(newReq("[64:ff9b::a00:1]:80")); err != nil || got == private {
		t.Errorf("direct: 64:ff9b::a00:1 keyed %q, %v; the private client 10.0.0.1 is keyed %q: want another key", got, err, private)
	}
	// Compared as it came, the entry is not a trusted proxy: it is the
	// client, and not keyed as the proxy 10.0.0.1 that forwarded it.
	wantKey(t, proxied, newReq("10.0.0.1:80", xff, "64:ff9b::a00:1"), "64:ff9b::/64", nil)
}
