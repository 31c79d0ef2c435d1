package keyfunc_test

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// complementOf returns the prefixes that together hold every address of
// hole's family except those of hole: for each bit of hole's prefix, the
// sibling prefix that differs from it in that bit.
func complementOf(hole netip.Prefix) []netip.Prefix {
	a := hole.Masked().Addr()
	var out []netip.Prefix
	for i := 0; i < hole.Bits(); i++ {
		b := a.AsSlice()
		b[i/8] ^= 0x80 >> (i % 8)
		sib, _ := netip.AddrFromSlice(b)
		out = append(out, netip.PrefixFrom(sib, i+1).Masked())
	}
	return out
}

// everyEight returns the 256 IPv4 /8 prefixes but those whose first byte is
// in skip.
func everyEight(skip ...int) []netip.Prefix {
	var out []netip.Prefix
next:
	for i := 0; i < 256; i++ {
		for _, s := range skip {
			if i == s {
				continue next
			}
		}
		out = append(out, netip.MustParsePrefix(strconv.Itoa(i)+".0.0.0/8"))
	}
	return out
}

// without returns ps less the prefix s.
func without(ps []netip.Prefix, s string) []netip.Prefix {
	var out []netip.Prefix
	for _, p := range ps {
		if p != netip.MustParsePrefix(s) {
			out = append(out, p)
		}
	}
	return out
}

// TestTrustedProxiesRefusesPrefixesCoveringAFamilyTogether: a single
// prefix holding every address of its family (0.0.0.0/0) was refused, but
// prefixes that do so together were taken, with the same effect: every
// peer of the family a proxy, every hop of it skipped, and the key
// whatever the client wrote of the other family (a fresh IPv6 address
// per request, a fresh bucket each time). They are refused too, with an
// error naming TrustedProxies, the family, and TrustedHops.
func TestTrustedProxiesRefusesPrefixesCoveringAFamilyTogether(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ps     []netip.Prefix
		family string
	}{
		{"two IPv4 halves", prefixes("0.0.0.0/1", "128.0.0.0/1"), "IPv4"},
		{"halves and a real proxy", prefixes("10.0.0.0/8", "128.0.0.0/1", "0.0.0.0/1"), "IPv4"},
		{"every /8", everyEight(), "IPv4"},
		{"overlapping, unsorted", prefixes("192.0.0.0/2", "10.0.0.0/8", "0.0.0.0/1", "128.0.0.0/2", "0.0.0.0/2"), "IPv4"},
		{"every IPv4 but 0.0.0.0, then it", append(complementOf(netip.MustParsePrefix("0.0.0.0/32")), netip.MustParsePrefix("0.0.0.0/32")), "IPv4"},
		{"every IPv4 but the last, then it", append(complementOf(netip.MustParsePrefix("255.255.255.255/32")), netip.MustParsePrefix("255.255.255.255/32")), "IPv4"},
		// IPv4-mapped prefixes are IPv4 prefixes (TrustedProxies turns them
		// so), alone or beside plain ones.
		{"mapped halves", prefixes("::ffff:0.0.0.0/97", "::ffff:128.0.0.0/97"), "IPv4"},
		{"mapped and plain half", prefixes("::ffff:0.0.0.0/97", "128.0.0.0/1"), "IPv4"},
		{"two IPv6 halves", prefixes("::/1", "8000::/1"), "IPv6"},
		{"IPv6 halves and an IPv4 proxy", prefixes("10.0.0.0/8", "8000::/1", "::/1"), "IPv6"},
		// A peer is unmapped before it is compared, so no IPv6 prefix ever
		// holds one of ::ffff:0:0/96: the rest of IPv6 is all of it.
		{"every IPv6 but the mapped ones", complementOf(netip.MustParsePrefix("::ffff:0:0/96")), "IPv6"},
	} {
		f, err := keyfunc.IP(keyfunc.TrustedProxies(tc.ps...))
		if err == nil {
			r := newReq("10.0.0.1:5000", xff, "2001:db8::1, 203.0.113.9")
			r2 := newReq("[2001:db8:ffff::1]:5000", xff, "192.0.2.77, 2001:db8:ffff::2")
			k, kerr := f(r)
			k2, kerr2 := f(r2)
			t.Errorf("%s: IP(TrustedProxies(%d prefixes)) accepted; want an error. A client behind proxy 10.0.0.1 claiming 2001:db8::1 keyed %q (%v); one behind 2001:db8:ffff::2 claiming 192.0.2.77 keyed %q (%v)",
				tc.name, len(tc.ps), k, kerr, k2, kerr2)
			continue
		}
		msg := err.Error()
		if f != nil || !strings.HasPrefix(msg, "keyfunc: IP: TrustedProxies: ") || !strings.Contains(msg, "every "+tc.family+" address") || !strings.Contains(msg, "TrustedHops") {
			t.Errorf("%s: error %q; want one starting \"keyfunc: IP: TrustedProxies: \", saying every %s address, pointing to TrustedHops", tc.name, msg, tc.family)
		}
	}
}

// TestTrustedProxiesAcceptsPrefixesLeavingAGap: a set missing a single
// address of each family, wherever the gap, is accepted, and that address
// is the client when it connects.
func TestTrustedProxiesAcceptsPrefixesLeavingAGap(t *testing.T) {
	for _, tc := range []struct {
		name string
		ps   []netip.Prefix
		gap  string // a peer address left untrusted
	}{
		{"every /8 but 10/8", everyEight(10), "10.0.0.1:80"},
		{"every /8 but 0/8", everyEight(0), "0.0.0.1:80"},
		{"every /8 but 255/8", everyEight(255), "255.0.0.1:80"},
		{"every IPv4 but 0.0.0.0", complementOf(netip.MustParsePrefix("0.0.0.0/32")), "0.0.0.0:80"},
		{"every IPv4 but the last", complementOf(netip.MustParsePrefix("255.255.255.255/32")), "255.255.255.255:80"},
		{"every IPv4 but 10.1.2.3", complementOf(netip.MustParsePrefix("10.1.2.3/32")), "10.1.2.3:80"},
		{"mapped halves but one address", append(complementOf(netip.MustParsePrefix("128.0.0.0/32"))[1:], netip.MustParsePrefix("::ffff:0.0.0.0/97")), "128.0.0.0:80"},
		{"every IPv6 but ::", complementOf(netip.MustParsePrefix("::/128")), "[::]:80"},
		{"every IPv6 but the last", complementOf(netip.MustParsePrefix("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128")), "[ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]:80"},
		// Its complement holds ::ffff:0:0/96, every IPv4 address: left out.
		{"every IPv6 but the one before the mapped ones", without(complementOf(netip.MustParsePrefix("::fffe:ffff:ffff/128")), "::ffff:0:0/96"), "[::fffe:ffff:ffff]:80"},
		{"every IPv6 but the one after the mapped ones", complementOf(netip.MustParsePrefix("::1:0:0:0/128")), "[::1:0:0:0]:80"},
	} {
		f, err := keyfunc.IP(keyfunc.TrustedProxies(tc.ps...), keyfunc.IPv6Prefix(128))
		if err != nil {
			t.Errorf("%s: IP(TrustedProxies(%d prefixes)) = %v; want it accepted", tc.name, len(tc.ps), err)
			continue
		}
		peer, _ := netip.ParseAddrPort(tc.gap)
		got, err := f(newReq(tc.gap, xff, "198.51.100.1"))
		if err != nil || got != peer.Addr().String() {
			t.Errorf("%s: key of untrusted peer %s = %q, %v; want the peer", tc.name, tc.gap, got, err)
		}
	}
}

// TestTrustedProxiesShortPrefixHoldingMappedAddressesStaysIPv6: as
// documented, a prefix shorter than /96 that holds the IPv4-mapped range
// is an IPv6 prefix; the peer, unmapped first, is IPv4 and not trusted.
func TestTrustedProxiesShortPrefixHoldingMappedAddressesStaysIPv6(t *testing.T) {
	f := mustIP(t, keyfunc.TrustedProxies(prefixes("::/80")...))
	wantKey(t, f, newReq("[::ffff:10.0.0.1]:80", xff, "198.51.100.1"), "10.0.0.1", nil)
	wantKey(t, f, newReq("10.0.0.1:80", xff, "198.51.100.1"), "10.0.0.1", nil)
	wantKey(t, f, newReq("[::1]:80", xff, "198.51.100.1"), "198.51.100.1", nil)
}
