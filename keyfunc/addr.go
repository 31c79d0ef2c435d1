package keyfunc

import (
	"net/netip"
	"strings"
)

// normPrefix masks p and turns an IPv4-mapped prefix into IPv4, so that it
// matches the unmapped addresses it is compared with.
func normPrefix(p netip.Prefix) netip.Prefix {
	a := p.Addr().WithZone("")
	if a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96).Masked()
	}
	return netip.PrefixFrom(a, p.Bits()).Masked()
}

// parseRemoteAddr parses RemoteAddr, "host:port" as net/http sets it or a
// bare address as some tests do. The result is unmapped and has no zone.
//
// Only a string shaped like "[v6]:port" or "v4:port" goes to
// netip.ParseAddrPort, so that the bare forms do not pay for its error.
func parseRemoteAddr(s string) (netip.Addr, bool) {
	if len(s) > 0 && (s[0] == '[' || strings.Count(s, ":") == 1) {
		if ap, err := netip.ParseAddrPort(s); err == nil {
			return ap.Addr().Unmap().WithZone(""), true
		}
	}
	return parseHostAddr(s)
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
