package keyfunc

import (
	"net/netip"
	"slices"
	"strings"
)

// NormalizePrefix returns p as [TrustedProxies] compares peers and hops
// with it: without a zone, masked, and, when it is an IPv4-mapped prefix of
// /96 or longer (::ffff:10.0.0.0/104), as the IPv4 prefix it holds
// (10.0.0.0/8), since every address is unmapped before it is compared. A
// mapped prefix shorter than /96 stays IPv6 and holds no IPv4 address.
//
// Code that must agree with an ip key on which addresses a prefix holds (a
// check of which peers are proxies, a list of exempt clients) compares with
// the prefix NormalizePrefix returns and with addresses passed through
// netip.Addr.Unmap and WithZone(""). An invalid prefix is returned as it
// is.
func NormalizePrefix(p netip.Prefix) netip.Prefix {
	if !p.IsValid() {
		return p
	}
	a := p.Addr().WithZone("")
	if a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96).Masked()
	}
	return netip.PrefixFrom(a, p.Bits()).Masked()
}

// mappedV6 holds the IPv4-mapped IPv6 addresses. No peer or hop is ever
// one (they are unmapped first), so no IPv6 prefix can trust one.
var mappedV6 = netip.MustParsePrefix("::ffff:0:0/96")

// coveredFamilies returns the families, "IPv4" then "IPv6", every address
// of which the prefixes normalized by NormalizePrefix hold together; none
// when they leave at least one address of each untrusted. IPv6 counts as
// covered without the IPv4-mapped addresses, which are compared as IPv4.
// It sorts copies of ps, O(n log n), once, when IP validates its options.
func coveredFamilies(ps []netip.Prefix) []string {
	var v4, v6 []netip.Prefix
	for _, p := range ps {
		if p.Addr().Is4() {
			v4 = append(v4, p)
		} else {
			v6 = append(v6, p)
		}
	}
	var fams []string
	if covers(v4, netip.IPv4Unspecified()) {
		fams = append(fams, "IPv4")
	}
	if len(v6) > 0 && covers(append(v6, mappedV6), netip.IPv6Unspecified()) {
		fams = append(fams, "IPv6")
	}
	return fams
}

// covers reports whether the masked prefixes ps, all of first's family,
// hold every address from first, the family's lowest, to its highest. It
// reorders ps.
func covers(ps []netip.Prefix, first netip.Addr) bool {
	slices.SortFunc(ps, func(a, b netip.Prefix) int { return a.Addr().Compare(b.Addr()) })
	next := first // the lowest address not yet known to be covered
	for _, p := range ps {
		if next.Less(p.Addr()) {
			return false // next is in no prefix: the later ones start higher
		}
		if last := lastAddr(p); !last.Less(next) {
			next = last.Next()
			if !next.IsValid() {
				return true // last was the family's highest address
			}
		}
	}
	return false
}

// lastAddr returns the highest address of the masked prefix p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().As16()
	bits := p.Bits()
	if p.Addr().Is4() {
		bits += 96
	}
	for i := range b {
		switch {
		case bits >= 8:
			bits -= 8
		case bits > 0:
			b[i] |= 0xff >> bits
			bits = 0
		default:
			b[i] = 0xff
		}
	}
	a := netip.AddrFrom16(b)
	if p.Addr().Is4() {
		return a.Unmap()
	}
	return a
}

// parseRemoteAddr parses RemoteAddr, "host:port" as net/http sets it or a
// bare address as some tests do. The result is unmapped and has no zone.
// The port may be an obfuscated one ("[2001:db8::1]:_hidden", RFC 7239
// section 6.3), as a middleware further out that copies a Forwarded for=
// node into RemoteAddr (gorilla's ProxyHeaders) leaves it.
//
// Only a string shaped like "[v6]:port" or "v4:port" goes to
// netip.ParseAddrPort, so that the bare forms do not pay for its error.
func parseRemoteAddr(s string) (netip.Addr, bool) {
	if a, _, ok := parseIPv4Port(s); ok {
		return a, true
	}
	if len(s) > 0 && (s[0] == '[' || strings.Count(s, ":") == 1) {
		if ap, err := netip.ParseAddrPort(s); err == nil {
			return ap.Addr().Unmap().WithZone(""), true
		}
	}
	if a, ok := parseHostAddr(s); ok {
		return a, true
	}
	if h := stripObfPort(s); len(h) < len(s) {
		return parseHostAddr(h)
	}
	return netip.Addr{}, false
}

// parseHostAddr parses a forwarding-header entry: "192.0.2.1",
// "2001:db8::1", "[2001:db8::1]", "[2001:db8::1]:443" or "192.0.2.1:80".
// The result is unmapped and has no zone. Entries longer than any address
// are rejected before parsing.
func parseHostAddr(s string) (netip.Addr, bool) {
	if len(s) == 0 || len(s) > maxAddrText {
		return netip.Addr{}, false
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		if a, err := netip.ParseAddr(s[1 : len(s)-1]); err == nil && a.Is6() {
			return a.Unmap().WithZone(""), true
		}
	}
	return netip.Addr{}, false
}

// parseIPv4Port parses s when it is an IPv4 address in canonical dotted
// decimal (four fields of 0..255 without leading zeros) followed by ':' and
// a port (1 to 5 digits, at most 65535), the form net/http gives RemoteAddr.
// It returns the address and the length of its text (the index of the
// ':'). Every s it accepts, netip.ParseAddrPort accepts too with the same
// address, whose String is s[:n]; ok is false for anything else, which the
// callers then parse the general way. It exists because it is several
// times cheaper than ParseAddrPort followed by AppendTo.
func parseIPv4Port(s string) (a netip.Addr, n int, ok bool) {
	var ip [4]byte
	i := 0
	for f := range 4 {
		// A field: "0", or 1 to 3 digits without a leading zero, at most
		// 255; then '.' (':' after the fourth).
		if i >= len(s) || s[i]-'0' > 9 {
			return netip.Addr{}, 0, false
		}
		v := uint(s[i] - '0')
		i++
		if v != 0 {
			for k := 0; k < 2 && i < len(s) && s[i]-'0' <= 9; k++ {
				v = v*10 + uint(s[i]-'0')
				i++
			}
			if v > 255 {
				return netip.Addr{}, 0, false
			}
		}
		ip[f] = byte(v)
		sep := byte('.')
		if f == 3 {
			sep = ':'
		}
		if i >= len(s) || s[i] != sep {
			return netip.Addr{}, 0, false
		}
		i++
	}
	port := s[i:]
	if len(port) == 0 || len(port) > 5 {
		return netip.Addr{}, 0, false
	}
	p := uint(0)
	for j := 0; j < len(port); j++ {
		d := port[j] - '0'
		if d > 9 {
			return netip.Addr{}, 0, false
		}
		p = p*10 + uint(d)
	}
	if p > 65535 {
		return netip.Addr{}, 0, false
	}
	return netip.AddrFrom4(ip), i - 1, true
}
