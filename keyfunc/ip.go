package keyfunc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
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
	// examines at most, counted from the right. Whatever the header's size,
	// no more entries than this are parsed, so the cost of a hostile header
	// is bounded.
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

// An IPOption configures [IP].
type IPOption func(*ipConfig)

type ipConfig struct {
	trusted    []netip.Prefix
	trustedSet bool
	hops       int
	hopsSet    bool
	source     source
	sources    int // number of source options given
	header     string
	fromCtx    func(context.Context) netip.Addr
	v6bits     int
	v4bits     int
	maxHops    int
}

// TrustedProxies declares the reverse proxies in front of this server. Only
// when the connecting peer (RemoteAddr) falls within one of the prefixes is
// a forwarding header read at all; then [FromXForwardedFor] (the default) or
// [FromForwarded] walks the chain right to left, skipping every hop within
// the prefixes, and the first address outside them is the client. A peer
// outside the prefixes is the client itself, whatever headers it sent.
//
// IPv4-mapped IPv6 prefixes (::ffff:10.0.0.0/104) are turned into their
// IPv4 form, so that either notation trusts the same peers.
//
// Giving no prefix is an error of [IP]. Exclusive with [TrustedHops].
func TrustedProxies(prefixes ...netip.Prefix) IPOption {
	ps := make([]netip.Prefix, len(prefixes))
	copy(ps, prefixes)
	return func(c *ipConfig) { c.trusted, c.trustedSet = ps, true }
}

// TrustedHops declares that exactly n reverse proxies stand between the
// internet and this server, each appending to X-Forwarded-For (or
// Forwarded). The client is then the n-th entry from the right. RemoteAddr
// is not checked: every peer counts as the nearest proxy, so the network
// must make sure that only the proxies can reach this server. Prefer
// [TrustedProxies] whenever the proxies' addresses are known.
//
// A chain with fewer than n entries yields [ErrNoClientIP]. n must be at
// least 1 and at most the maximum of [MaxHops]. Exclusive with
// [TrustedProxies].
func TrustedHops(n int) IPOption {
	return func(c *ipConfig) { c.hops, c.hopsSet = n, true }
}

// FromXForwardedFor reads the client from X-Forwarded-For, walked right to
// left over all its header lines (as if they were one comma-separated
// list). It is the default source once [TrustedProxies] or [TrustedHops] is
// given. Entries may be bare addresses, "[v6]", "[v6]:port" or "v4:port".
func FromXForwardedFor() IPOption {
	return func(c *ipConfig) { c.source, c.sources = srcXFF, c.sources+1 }
}

// FromForwarded reads the client from the RFC 7239 Forwarded header
// instead of X-Forwarded-For: the for= parameter of each element, walked
// right to left. A trusted element without for=, with "unknown" or an
// obfuscated identifier ("_hidden"), or with malformed quoting yields
// [ErrNoClientIP]. Requires [TrustedProxies] or [TrustedHops].
func FromForwarded() IPOption {
	return func(c *ipConfig) { c.source, c.sources = srcForwarded, c.sources+1 }
}

// FromHeader reads the client from a single-value header that the trusted
// proxy overwrites on every request, such as X-Real-IP (nginx realip),
// CF-Connecting-IP (Cloudflare) or True-Client-IP (only where the edge
// strips the client's own value). The header is read only when the peer
// falls within [TrustedProxies], which is required. If the header appears
// several times, the last value (set by the hop nearest to us) is used; a
// missing or unparseable value yields [ErrNoClientIP], never an earlier
// value.
func FromHeader(name string) IPOption {
	return func(c *ipConfig) {
		c.source, c.sources, c.header = srcHeader, c.sources+1, name
	}
}

// FromContext reads the client from the request context through get, for
// a middleware that has already decided the client IP and put it there,
// such as chi's middleware.ClientIPFromXFF with middleware.GetClientIPAddr:
//
//	r.Use(middleware.ClientIPFromXFF("10.0.0.0/8"))
//	ip, err := keyfunc.IP(keyfunc.FromContext(middleware.GetClientIPAddr))
//
// The trust decision is then that middleware's, so FromContext excludes
// [TrustedProxies] and [TrustedHops]. An invalid (zero) address means the
// middleware found no client, and yields [ErrNoClientIP]: there is no
// fallback to RemoteAddr, which would be the proxy's address. The address
// is unmapped, stripped of its zone and grouped like any other.
func FromContext(get func(context.Context) netip.Addr) IPOption {
	return func(c *ipConfig) { c.source, c.sources, c.fromCtx = srcContext, c.sources+1, get }
}

// IPv6Prefix sets the prefix length IPv6 clients are grouped by (default
// [DefaultIPv6Prefix]); 128 keys every address apart. It must be within
// 1..128.
func IPv6Prefix(bits int) IPOption { return func(c *ipConfig) { c.v6bits = bits } }

// IPv4Prefix sets the prefix length IPv4 clients are grouped by (default
// [DefaultIPv4Prefix], one key per address). It must be within 1..32.
func IPv4Prefix(bits int) IPOption { return func(c *ipConfig) { c.v4bits = bits } }

// MaxHops sets how many forwarding-header entries are examined at most
// (default [DefaultMaxHops]). When the walk has not found the client after
// that many entries, the result is [ErrNoClientIP]. It must be within
// 1..1024.
func MaxHops(n int) IPOption { return func(c *ipConfig) { c.maxHops = n } }

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
// Ports and IPv6 zones are stripped, and IPv4-mapped IPv6 (::ffff:a.b.c.d)
// becomes IPv4 before anything else, so the two notations of one client
// share a key and a mapped address can neither slip past a trusted prefix
// nor fall into an IPv6 group. IPv6 addresses are then grouped by
// [IPv6Prefix] (default /64) and IPv4 by [IPv4Prefix] (default /32). The
// key is the address ("192.0.2.1") or, when grouped, the masked prefix
// ("2001:db8:1:2::/64", "198.51.100.0/24").
//
// # Bad input
//
// A RemoteAddr that is not an IP address, a trusted header that is missing
// or malformed, a chain whose every hop is trusted, or one longer than
// [MaxHops] yields an error matching [ErrNoClientIP] and [ErrNoKey]; the
// key is then "", which callers must not use. No request yields an empty
// key with a nil error, and no input makes IP panic. At most MaxHops
// entries are examined, from the right, so the cost of a header is bounded
// whatever its size.
//
// Invalid options (a prefix length out of range, two sources, a header
// source without trusted proxies, ...) make IP return an error naming the
// option. The returned Func is safe for concurrent use.
func IP(opts ...IPOption) (Func, error) {
	c := &ipConfig{v6bits: DefaultIPv6Prefix, v4bits: DefaultIPv4Prefix, maxHops: DefaultMaxHops}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("keyfunc: IP: nil option")
		}
		o(c)
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c.key, nil
}

func (c *ipConfig) validate() error {
	if c.v6bits < 1 || c.v6bits > 128 {
		return fmt.Errorf("keyfunc: IP: IPv6Prefix %d is outside 1..128", c.v6bits)
	}
	if c.v4bits < 1 || c.v4bits > 32 {
		return fmt.Errorf("keyfunc: IP: IPv4Prefix %d is outside 1..32", c.v4bits)
	}
	if c.maxHops < 1 || c.maxHops > 1024 {
		return fmt.Errorf("keyfunc: IP: MaxHops %d is outside 1..1024", c.maxHops)
	}
	if c.sources > 1 {
		return errors.New("keyfunc: IP: more than one of FromXForwardedFor, FromForwarded, FromHeader, FromContext")
	}
	if c.trustedSet && c.hopsSet {
		return errors.New("keyfunc: IP: TrustedProxies and TrustedHops are exclusive")
	}
	if c.trustedSet {
		if len(c.trusted) == 0 {
			return errors.New("keyfunc: IP: TrustedProxies: no prefix given")
		}
		for i, p := range c.trusted {
			if !p.IsValid() {
				return fmt.Errorf("keyfunc: IP: TrustedProxies: prefix %d is invalid", i)
			}
			c.trusted[i] = normPrefix(p)
		}
	}
	if c.hopsSet && (c.hops < 1 || c.hops > c.maxHops) {
		return fmt.Errorf("keyfunc: IP: TrustedHops %d is outside 1..MaxHops (%d)", c.hops, c.maxHops)
	}
	trust := c.trustedSet || c.hopsSet
	switch c.source {
	case srcRemoteAddr:
		if trust {
			c.source = srcXFF
		}
	case srcXFF, srcForwarded:
		if !trust {
			return errors.New("keyfunc: IP: FromXForwardedFor/FromForwarded need TrustedProxies or TrustedHops")
		}
	case srcHeader:
		if !c.trustedSet {
			return fmt.Errorf("keyfunc: IP: FromHeader(%q) needs TrustedProxies", c.header)
		}
		if !validHeaderName(c.header) {
			return fmt.Errorf("keyfunc: IP: FromHeader: %q is not a valid header name", c.header)
		}
		c.header = http.CanonicalHeaderKey(c.header)
	case srcContext:
		if c.fromCtx == nil {
			return errors.New("keyfunc: IP: FromContext: nil function")
		}
		if trust {
			return errors.New("keyfunc: IP: FromContext excludes TrustedProxies and TrustedHops (the context's middleware decides trust)")
		}
	}
	return nil
}

// normPrefix masks p and turns an IPv4-mapped prefix into IPv4, so that it
// matches the unmapped addresses it is compared with.
func normPrefix(p netip.Prefix) netip.Prefix {
	a := p.Addr().WithZone("")
	if a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96).Masked()
	}
	return netip.PrefixFrom(a, p.Bits()).Masked()
}

// key is the Func returned by IP.
func (c *ipConfig) key(r *http.Request) (string, error) {
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
// It allocates once, for the returned string, unless remoteAddr (a short
// string net/http built) begins with the very same text followed by its
// port: then the key is that substring and nothing is allocated. Header
// substrings are never reused, so a key never pins a large header.
func (c *ipConfig) format(a netip.Addr, remoteAddr string) string {
	var buf [64]byte
	bits := c.v6bits
	if a.Is4() {
		bits = c.v4bits
	}
	var b []byte
	if bits == a.BitLen() {
		b = a.AppendTo(buf[:0])
	} else if p, err := a.Prefix(bits); err == nil { // err is impossible: bits was validated
		b = p.AppendTo(buf[:0])
	} else {
		b = a.AppendTo(buf[:0])
	}
	if n := len(b); len(remoteAddr) > n && remoteAddr[n] == ':' && remoteAddr[:n] == string(b) {
		return remoteAddr[:n]
	}
	return string(b)
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

// validHeaderName reports whether s is a non-empty RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) {
			return false
		}
	}
	return true
}

func isTokenChar(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	switch b {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}
