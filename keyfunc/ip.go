package keyfunc

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"

	"github.com/ratekeeper/ratekeeper/internal/errlist"
)

// Defaults of [IP].
const (
	// DefaultIPv6Prefix is the prefix length IPv6 clients are grouped by: a
	// subscriber usually holds at least a /64 and can rotate through it at
	// will, so per-address keys would be worthless.
	DefaultIPv6Prefix = 64
	// DefaultIPv4Prefix is the prefix length IPv4 clients are grouped by:
	// 32, one key per address.
	DefaultIPv4Prefix = 32
	// DefaultMaxHops is the number of forwarding-header entries [IP]
	// examines at most, counted from the right (blank header lines count
	// too). Whatever the header's size, no more entries than this are
	// looked at, each through at most 513 bytes, so the cost of a hostile
	// header is bounded.
	DefaultMaxHops = 32
)

// maxAddrText is the longest entry parsed as an address. The longest
// legitimate form, "[ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255%zone]:65535",
// fits with room for a 40-byte zone.
const maxAddrText = 100

// source is where IP reads the client address.
type source int

const (
	srcRemoteAddr source = iota
	srcXFF
	srcForwarded
	srcHeader
	srcContext
)

// IP returns a Func whose key is the client's IP address, grouped by prefix.
//
// # Who is trusted
//
// With no option, the client is the connecting peer, RemoteAddr, and no
// header is ever read: this is right for a server the internet reaches
// directly, and wrong behind a proxy (every client would share the proxy's
// key). Behind proxies, declare them with [TrustedProxies] (preferred) or
// [TrustedHops], and choose the header with [FromXForwardedFor] (the
// default), [FromForwarded] or [FromHeader]. A header sent by a peer that is
// not a trusted proxy is ignored, so a client reaching the server directly
// cannot choose its key. The leftmost entries of a forwarding header are
// written by the client and are never believed unless every hop to their
// right is trusted. chi's deprecated middleware.RealIP rewrites RemoteAddr
// from spoofable headers; with it installed, the default IP trusts whatever
// the client sent. Use chi's ClientIPFrom* middlewares with [FromContext]
// instead.
//
// # Normal form
//
// Ports and IPv6 zones are stripped (an obfuscated port too, RFC 7239
// section 6.3, as a middleware copying a Forwarded node into RemoteAddr
// leaves it: "[2001:db8::1]:_hidden"), and IPv4-mapped IPv6 (::ffff:a.b.c.d)
// becomes IPv4 before anything else, so the two notations of one client
// share a key and a mapped address can neither slip past a trusted prefix
// nor fall into an IPv6 group. A client of the well-known prefix
// 64:ff9b::/96, an IPv4 client that a stateless translator (SIIT-DC, RFC
// 7755) hands an IPv6-only service, is keyed as the IPv4 address it carries
// (RFC 6052), so that IPv4 clients do not all share its /64. A 6to4
// address (2002::/16, RFC 3056) is keyed as the IPv4 address in its bits
// 16..47 too: the host at that address holds the whole /48
// 2002:<IPv4>::/48, whose 65,536 /64s would otherwise be as many keys,
// and over IPv4 it has one. So is a Teredo client (2001::/32, RFC 4380)
// as the IPv4 address its NAT maps it to (inverted in the last 32 bits):
// its /64 is its Teredo server's, which every client of that server
// shares. The IPv4 clients of a translator with a prefix of its own are
// keyed as their IPv4 addresses once it is declared with
// [NAT64Prefixes]; undeclared, an address of the local-use prefix
// 64:ff9b:1::/48 (RFC 8215), whose length the network chooses, is keyed
// by itself, one translated client each. A trusted proxy's prefix is
// compared with the address as it came. Of the well-known prefix, 6to4
// and Teredo, only a global IPv4 address counts: none of them may carry
// a non-global one (RFC 6052 section 3.1, RFC 3056 section 2: private,
// loopback, link-local, shared, documentation, benchmarking, multicast
// or reserved), which a translator or relay drops, so an address such
// as 64:ff9b::a00:1 is no translated client, and is keyed as the IPv6
// address it is, not as the private 10.0.0.1. IPv6 addresses are then
// grouped by [IPv6Prefix] (default /64) and IPv4 by [IPv4Prefix]
// (default /32). The key is the address ("192.0.2.1") or, when grouped,
// the masked prefix ("2001:db8:1:2::/64", "198.51.100.0/24").
//
// # Bad input
//
// A RemoteAddr that is not an IP address, a trusted header that is missing
// or malformed or names the client "unknown" or obfuscated (see
// [FromForwarded]), a chain whose every hop is trusted, or one longer than
// [MaxHops] yields an error matching [ErrNoClientIP] and [ErrNoKey]; the
// key is then "", which callers must not use. No request yields an empty
// key with a nil error, and no input makes IP panic. At most MaxHops
// entries are examined, from the right, so the cost of a header is bounded
// whatever its size.
//
// Invalid options (a prefix length out of range, two sources, a trust
// option given twice, a header source without trusted proxies, a NAT64
// prefix of a length RFC 6052 does not define, ...) make
// IP return an error naming the option: every one that does not depend
// on another refused (TrustedHops is judged against MaxHops once that is
// valid, a source once there is one), several joined with [errors.Join],
// one per line, a *[TrustAllError] among them for errors.As. The returned Func is safe for
// concurrent use.
func IP(opts ...IPOption) (Func, error) {
	c := &ipConfig{v6bits: DefaultIPv6Prefix, v4bits: DefaultIPv4Prefix, maxHops: DefaultMaxHops}
	var errs []error
	for i, o := range opts {
		if o == nil {
			errs = append(errs, fmt.Errorf("keyfunc: IP: nil option at index %d", i))
			continue
		}
		o(c)
	}
	if errs = c.validate(errs); len(errs) > 0 {
		return nil, errlist.Join(errs)
	}
	return c.key, nil
}

// validate appends to errs every problem of c that does not depend on
// another one found (TrustedHops is judged against MaxHops only when
// that is valid, and the source only when there is one), and, when
// there is none, completes c.
func (c *ipConfig) validate(errs []error) []error {
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("keyfunc: IP: "+format, args...))
	}
	if c.v6bits < 1 || c.v6bits > 128 {
		bad("IPv6Prefix %d is outside 1..128", c.v6bits)
	}
	if c.v4bits < 1 || c.v4bits > 32 {
		bad("IPv4Prefix %d is outside 1..32", c.v4bits)
	}
	maxHopsOK := c.maxHops >= 1 && c.maxHops <= maxMaxHops
	if !maxHopsOK {
		bad("MaxHops %d is outside 1..%d", c.maxHops, maxMaxHops)
	}
	if c.sources > 1 {
		bad("more than one of FromXForwardedFor, FromForwarded, FromHeader, FromContext")
	}
	if c.trustedN > 1 {
		bad("TrustedProxies given more than once (list every proxy prefix in one TrustedProxies)")
	}
	if c.hopsN > 1 {
		bad("TrustedHops given more than once")
	}
	if c.trustedSet && c.hopsSet {
		bad("TrustedProxies and TrustedHops are exclusive")
	}
	if c.trustedSet {
		if len(c.trusted) == 0 {
			bad("TrustedProxies: no prefix given")
		}
		norm := make([]netip.Prefix, len(c.trusted)) // the option's slice may be shared: never write to it
		prefixesOK := true
		for i, p := range c.trusted {
			if !p.IsValid() {
				bad("TrustedProxies: prefix %d is invalid", i)
				prefixesOK = false
				continue
			}
			norm[i] = NormalizePrefix(p)
			if a := p.Addr().WithZone(""); netip.PrefixFrom(a, p.Bits()) != p.Masked() {
				// 10.0.0.5/16, an interface's address as `ip addr`
				// shows it: masked, every host of the network would be
				// trusted to name any client.
				host := NormalizePrefix(netip.PrefixFrom(a, a.BitLen()))
				bad("TrustedProxies: prefix %d, %s, has bits set past its length: give %s for that proxy alone, or %s for its whole network", i, p, host, norm[i])
				prefixesOK = false
				continue
			}
			if norm[i].Bits() == 0 {
				// Every hop of its family would be skipped: the client
				// would be the first entry of the other family, or the
				// end of the chain, whatever it wrote there.
				errs = append(errs, &TrustAllError{Families: []string{family(norm[i].Addr())}, Index: i, Prefix: p})
				prefixesOK = false
			}
		}
		if fams := coveredFamilies(norm); prefixesOK && len(fams) > 0 {
			// The same as a prefix of length 0, by pieces.
			errs = append(errs, &TrustAllError{Families: fams, Index: -1})
		}
		c.trusted = norm
	}
	if c.hopsSet {
		if maxHopsOK && (c.hops < 1 || c.hops > c.maxHops) {
			bad("TrustedHops %d is outside 1..MaxHops (%d)", c.hops, c.maxHops)
		} else if !maxHopsOK && (c.hops < 1 || c.hops > maxMaxHops) {
			bad("TrustedHops %d is outside 1..%d, whatever MaxHops", c.hops, maxMaxHops)
		}
	}
	errs = c.validateNAT64(errs)
	if c.sources > 1 {
		return errs // which one is meant is not known
	}
	trust := c.trustedSet || c.hopsSet
	switch c.source {
	case srcRemoteAddr:
		if trust {
			c.source = srcXFF
		}
	case srcXFF, srcForwarded:
		if !trust {
			bad("FromXForwardedFor/FromForwarded need TrustedProxies or TrustedHops")
		}
	case srcHeader:
		if !c.trustedSet {
			bad("FromHeader(%q) needs TrustedProxies", c.header)
		}
		if !validHeaderName(c.header) {
			bad("FromHeader: %q is not a valid header name", c.header)
			break
		}
		c.header = http.CanonicalHeaderKey(c.header)
		// A list of hops read as one address would fail for every chain
		// of two entries: name the option that walks it.
		switch c.header {
		case "X-Forwarded-For":
			bad("FromHeader(%q): X-Forwarded-For is a list of hops, not one address; use FromXForwardedFor", c.header)
		case "Forwarded":
			bad("FromHeader(%q): Forwarded is a list of hops, not one address; use FromForwarded", c.header)
		case "Host":
			// Never in the header map of an incoming request: every
			// request from a proxy would have no client IP.
			bad("FromHeader(%q): Host names the server the request is for, not the client, and net/http moves it out of the header map (to r.Host)", c.header)
		}
	case srcContext:
		if c.fromCtx == nil {
			bad("FromContext: nil function")
		}
		if trust {
			bad("FromContext excludes TrustedProxies and TrustedHops (the context's middleware decides trust)")
		}
	}
	return errs
}

// validateNAT64 appends to errs the problems of the NAT64Prefixes, and,
// when there is none, keeps only the network-specific ones.
func (c *ipConfig) validateNAT64(errs []error) []error {
	if c.nat64N > 1 {
		errs = append(errs, errors.New("keyfunc: IP: NAT64Prefixes given more than once (list every translator prefix in one NAT64Prefixes)"))
	}
	if !c.nat64Set {
		return errs
	}
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("keyfunc: IP: NAT64Prefixes: "+format, args...))
	}
	if len(c.nat64) == 0 {
		bad("no prefix given")
	}
	ok := make([]bool, len(c.nat64))
	var nsp []netip.Prefix
	for i, p := range c.nat64 {
		switch {
		case !p.IsValid():
			bad("prefix %d is invalid", i)
		case !p.Addr().Is6() || p.Addr().Is4In6():
			bad("prefix %d, %s, is not an IPv6 prefix", i, p)
		case p.Addr().Zone() != "" || p.Masked() != p:
			bad("prefix %d, %s, has bits set past its length", i, p)
		case !rfc6052Length(p.Bits()):
			bad("prefix %d, %s, is not 32, 40, 48, 56, 64 or 96 bits long (RFC 6052)", i, p)
		case p == wellKnownNAT64:
			// Always recognised.
		case p.Overlaps(wellKnownNAT64):
			bad("prefix %d, %s, overlaps the well-known prefix %s, which is always recognised", i, p, wellKnownNAT64)
		default:
			ok[i] = true
			for j, q := range c.nat64[:i] {
				if ok[j] && p.Overlaps(q) {
					bad("prefixes %d and %d, %s and %s, overlap: which one embeds the address would be ambiguous", j, i, q, p)
				}
			}
			nsp = append(nsp, p)
		}
	}
	c.nat64 = nsp
	return errs
}

// wellKnownNAT64 is the well-known prefix of RFC 6052; localUseNAT64 the
// prefix RFC 8215 sets aside for local translation.
var (
	wellKnownNAT64 = netip.MustParsePrefix("64:ff9b::/96")
	localUseNAT64  = netip.MustParsePrefix("64:ff9b:1::/48")
)

// rfc6052Length reports whether bits is the length of an RFC 6052 prefix.
func rfc6052Length(bits int) bool {
	switch bits {
	case 32, 40, 48, 56, 64, 96:
		return true
	}
	return false
}

// key is the Func returned by IP.
func (c *ipConfig) key(r *http.Request) (string, error) {
	if c.source == srcRemoteAddr && c.v4bits == 32 {
		// The common case, "a.b.c.d:port" as net/http writes it: the key is
		// the address as written, which is the canonical form.
		if n, ok := ipv4PortLen(r.RemoteAddr); ok {
			return r.RemoteAddr[:n], nil
		}
	}
	a, fromPeer, err := c.client(r)
	if err != nil {
		return "", err
	}
	if fromPeer {
		return c.format(a, r.RemoteAddr), nil
	}
	return c.format(a, ""), nil
}

// client finds the client address, unmapped and without zone, and
// reports whether it is the peer's (RemoteAddr).
func (c *ipConfig) client(r *http.Request) (netip.Addr, bool, error) {
	if c.source == srcContext {
		a := c.fromCtx(r.Context())
		if !a.IsValid() {
			return netip.Addr{}, false, errNoContextIP
		}
		return a.Unmap().WithZone(""), false, nil
	}
	if !c.hopsSet {
		peer, ok := parseRemoteAddr(r.RemoteAddr)
		if !ok {
			return netip.Addr{}, false, errBadRemoteAddr
		}
		if c.source == srcRemoteAddr || !c.isTrusted(peer) {
			return peer, true, nil
		}
	}
	a, err := c.fromHeader(r)
	return a, false, err
}

// fromHeader reads the client from the configured forwarding header.
func (c *ipConfig) fromHeader(r *http.Request) (netip.Addr, error) {
	switch c.source {
	case srcHeader:
		vs := r.Header[c.header]
		if len(vs) == 0 {
			return netip.Addr{}, errNoHeader
		}
		v := vs[len(vs)-1]
		if len(v) > maxEntryLen {
			return netip.Addr{}, errBadEntry
		}
		a, ok := parseHostAddr(trimOWS(v))
		if !ok {
			return netip.Addr{}, errBadEntry
		}
		return a, nil
	case srcForwarded:
		return c.walk(r.Header["Forwarded"], true)
	default:
		return c.walk(r.Header["X-Forwarded-For"], false)
	}
}

// isTrusted reports whether a falls within a trusted prefix.
func (c *ipConfig) isTrusted(a netip.Addr) bool {
	for _, p := range c.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// format renders a as a key, grouped by the configured prefix lengths.
// It allocates once, for the returned string, unless remoteAddr begins
// with the very same text followed by a port of at most five characters
// (":65535", as net/http writes it): then the key is that substring and
// nothing is allocated. A longer RemoteAddr, which only a middleware
// further out can have written (from a header: a zero-padded or
// obfuscated port), is not reused, nor is any header substring, so a key
// never pins a large header.
func (c *ipConfig) format(a netip.Addr, remoteAddr string) string {
	a, alone := c.unembed(a)
	var buf [64]byte
	bits := c.v6bits
	if a.Is4() {
		bits = c.v4bits
	} else if alone {
		bits = 128
	}
	var b []byte
	if bits == a.BitLen() {
		b = a.AppendTo(buf[:0])
	} else if p, err := a.Prefix(bits); err == nil { // err is impossible: bits was validated
		b = p.AppendTo(buf[:0])
	} else {
		b = a.AppendTo(buf[:0])
	}
	if n := len(b); len(remoteAddr) > n && len(remoteAddr) <= n+len(":65535") && remoteAddr[n] == ':' && remoteAddr[:n] == string(b) {
		return remoteAddr[:n]
	}
	return string(b)
}

// unembed returns the address the client at a is keyed by, and whether
// an IPv6 one is to be keyed alone rather than grouped: the IPv4 address a
// declared NAT64 prefix embeds when it is global, else the translated
// address less its suffix, alone; an address of the local-use prefix,
// alone; otherwise what embeddedIPv4 finds.
func (c *ipConfig) unembed(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return a, false
	}
	for _, p := range c.nat64 {
		if p.Contains(a) {
			return fromNSP(a, p.Bits())
		}
	}
	if localUseNAT64.Contains(a) {
		return a, true
	}
	return embeddedIPv4(a), false
}

// fromNSP returns the IPv4 address that a, of a network-specific prefix
// of length bits, embeds (RFC 6052 section 2.2) when it is global; when
// it is not, a with its suffix cleared, to be keyed alone; and a, to be
// grouped, when a is no IPv4-embedded address (bits 64..71 set below /96).
func fromNSP(a netip.Addr, bits int) (netip.Addr, bool) {
	b := a.As16()
	var v4 [4]byte
	end := 16 // where the suffix begins
	switch bits {
	case 96:
		copy(v4[:], b[12:16])
	default:
		if b[8] != 0 {
			return a, false
		}
		// The prefix ends at byte bits/8; the address fills the next
		// four bytes, skipping byte 8.
		n := copy(v4[:], b[bits/8:8])
		copy(v4[n:], b[9:9+4-n])
		end = 9 + 4 - n
	}
	if v := netip.AddrFrom4(v4); isGlobalIPv4(v) {
		return v, false
	}
	clear(b[end:])
	return netip.AddrFrom16(b), true
}

// embeddedIPv4 returns the IPv4 address that an IPv6 address a stands
// for, when it is global, and any other a as it is:
//
//   - an address of the well-known NAT64 prefix 64:ff9b::/96 carries it in
//     its last 32 bits (RFC 6052): a stateless translator (SIIT-DC, RFC
//     7755) hands an IPv6-only service its IPv4 clients so, and grouped by
//     an IPv6 prefix every IPv4 client would share one key;
//   - an address of the 6to4 prefix 2002::/16 carries it in bits 16..47
//     (RFC 3056): the host at that IPv4 address holds the whole /48
//     2002:<v4>::/48, 65,536 /64s, and keyed by one it would have as many
//     keys as it liked;
//   - a Teredo address (2001::/32, RFC 4380) carries, inverted in its last
//     32 bits, the address the client's NAT maps it to, the one it has
//     over IPv4; its /64 is its Teredo server's, shared by every client of
//     that server.
//
// None may carry a non-global IPv4 address (RFC 6052 section 3.1, RFC
// 3056 section 2; translators drop such packets, and no NAT on the
// internet maps a client to one), so no translated client, 6to4 site or
// Teredo client has one; keyed as that address, it would share the key of
// the private client or proxy at it.
func embeddedIPv4(a netip.Addr) netip.Addr {
	if !a.Is6() {
		return a
	}
	b := a.As16()
	var v4 netip.Addr
	switch {
	case b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && b[4]|b[5]|b[6]|b[7]|b[8]|b[9]|b[10]|b[11] == 0:
		v4 = netip.AddrFrom4([4]byte(b[12:]))
	case b[0] == 0x20 && b[1] == 0x02:
		v4 = netip.AddrFrom4([4]byte(b[2:6]))
	case b[0] == 0x20 && b[1] == 0x01 && b[2] == 0 && b[3] == 0:
		v4 = netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
	default:
		return a
	}
	if !isGlobalIPv4(v4) {
		return a
	}
	return v4
}

// nonGlobalIPv4 holds the IPv4 addresses that are not globally reachable:
// the blocks of the IANA IPv4 Special-Purpose Address Registry (RFC 6890)
// marked so, which include those RFC 6052 section 3.1 names (RFC 1918, RFC
// 5735 section 3), and multicast, which is never a source address.
var nonGlobalIPv4 = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),          // "this" network
	netip.MustParsePrefix("10.0.0.0/8"),         // private use
	netip.MustParsePrefix("100.64.0.0/10"),      // shared address space (RFC 6598)
	netip.MustParsePrefix("127.0.0.0/8"),        // loopback
	netip.MustParsePrefix("169.254.0.0/16"),     // link local
	netip.MustParsePrefix("172.16.0.0/12"),      // private use
	netip.MustParsePrefix("192.0.0.0/24"),       // IETF protocol assignments, but see globalIPv4
	netip.MustParsePrefix("192.0.2.0/24"),       // documentation (TEST-NET-1)
	netip.MustParsePrefix("192.168.0.0/16"),     // private use
	netip.MustParsePrefix("198.18.0.0/15"),      // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"),    // documentation (TEST-NET-2)
	netip.MustParsePrefix("203.0.113.0/24"),     // documentation (TEST-NET-3)
	netip.MustParsePrefix("224.0.0.0/4"),        // multicast
	netip.MustParsePrefix("240.0.0.0/4"),        // reserved
	netip.MustParsePrefix("255.255.255.255/32"), // limited broadcast (within 240/4)
}

// globalIPv4 holds the globally reachable addresses within nonGlobalIPv4:
// the PCP (RFC 7723) and TURN (RFC 8155) anycast addresses.
var globalIPv4 = []netip.Addr{
	netip.MustParseAddr("192.0.0.9"),
	netip.MustParseAddr("192.0.0.10"),
}

// isGlobalIPv4 reports whether the IPv4 address a is globally reachable.
func isGlobalIPv4(a netip.Addr) bool {
	for _, g := range globalIPv4 {
		if a == g {
			return true
		}
	}
	for _, p := range nonGlobalIPv4 {
		if p.Contains(a) {
			return false
		}
	}
	return true
}
