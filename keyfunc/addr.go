package keyfunc

import (
	"math/bits"
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
	if n, ok = ipv4PortLen(s); !ok {
		return netip.Addr{}, 0, false
	}
	// s[:n] is four fields of digits, each of at most 255, and three dots.
	var ip [4]byte
	f := 0
	for _, c := range []byte(s[:n]) {
		if c == '.' {
			f++
			continue
		}
		ip[f&3] = ip[f&3]*10 + c - '0'
	}
	return netip.AddrFrom4(ip), n, true
}

// ipv4PortLen reports whether parseIPv4Port accepts s, and the length of
// the address it would return, without building the address: what the ip
// key of a RemoteAddr needs, the address as written being its canonical
// form.
//
// It looks at eight bytes at a time: s is 9 ("0.0.0.0:0") to 21
// ("255.255.255.255:65535") bytes long, which two or three loads of eight
// cover (the last one overlapping the one before it, shifted so that the
// bytes past s are zeros). A mask of the bytes that are not digits
// (nonDigits) gives the places of the separators, the first five of which
// must be three dots, a colon and the end of s; the fields between them
// are then checked for their length, their leading zeros and, when they
// have three digits, their value, compared as text.
func ipv4PortLen(s string) (n int, ok bool) {
	l := len(s)
	if l < 9 || l > 21 {
		return 0, false
	}
	// Bit i of m is set when s[i] is not a digit, or i >= l (for i < 24;
	// the end of s is marked whether it is at most 15 or beyond).
	m := nonDigits(load8(s, 0))
	if l < 16 {
		m |= nonDigits(load8(s, l-8)>>(8*(16-l))) << 8
	} else {
		m |= nonDigits(load8(s, 8))<<8 | nonDigits(load8(s, l-8)>>(8*(24-l)))<<16
	}
	d1 := bits.TrailingZeros64(m)
	m &= m - 1
	d2 := bits.TrailingZeros64(m)
	m &= m - 1
	d3 := bits.TrailingZeros64(m)
	m &= m - 1
	c := bits.TrailingZeros64(m)
	m &= m - 1
	// Fields of 1 to 3 digits, a port of 1 to 5 and nothing after it.
	if bits.TrailingZeros64(m) != l || uint(d1-1) > 2 || uint(d2-d1-2) > 2 || uint(d3-d2-2) > 2 || uint(c-d3-2) > 2 || uint(l-c-2) > 4 {
		return 0, false
	}
	if s[d1] != '.' || s[d2] != '.' || s[d3] != '.' || s[c] != ':' {
		return 0, false
	}
	if !ipv4Field(s, 0, d1) || !ipv4Field(s, d1+1, d2) || !ipv4Field(s, d2+1, d3) || !ipv4Field(s, d3+1, c) {
		return 0, false
	}
	if l-c == 6 { // five digits: at most "65535", compared as text
		p := s[c+1:]
		if uint64(p[0])<<32|uint64(p[1])<<24|uint64(p[2])<<16|uint64(p[3])<<8|uint64(p[4]) > 0x36_35_35_33_35 {
			return 0, false
		}
	}
	return c, true
}

// ipv4Field reports whether the digits s[i:j], one to three of them, are a
// field of an IPv4 address in canonical dotted decimal: "0", or no leading
// zero and at most 255 (compared as text).
func ipv4Field(s string, i, j int) bool {
	switch j - i {
	case 1:
		return true
	case 2:
		return s[i] != '0'
	}
	f := s[i : i+3]
	return f[0] != '0' && uint(f[0])<<16|uint(f[1])<<8|uint(f[2]) <= 0x32_35_35
}

// load8 returns s[i:i+8] as a little-endian uint64 (s[i] in the low
// byte): one load.
func load8(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// nonDigits returns the bytes of w that are not ASCII digits as a mask,
// bit i for byte i (the byte w>>(8*i)). Each byte's low seven bits are
// compared with '0' and ':' by additions that cannot carry out of the byte
// (0x7f+0x50 < 0x100): bit 7 of lo+0x50 is set when they are at least
// 0x30, of lo+0x46 when they are at least 0x3a; a byte with bit 7 set is
// no digit. The eight bit 7s are then gathered into the top byte of a
// product whose partial products never overlap.
func nonDigits(w uint64) uint64 {
	const hi = 0x8080808080808080
	lo := w &^ hi
	digits := (lo + 0x5050505050505050) &^ (lo + 0x4646464646464646) &^ w & hi
	return (digits ^ hi) >> 7 * 0x0102040810204080 >> 56
}
