package keyfunc

import (
	"context"
	"net/netip"
)

// An IPOption configures [IP].
type IPOption func(*ipConfig)

// ipConfig is what the options of IP set; IP validates it and keeps it,
// read-only, in the returned Func.
type ipConfig struct {
	trusted    []netip.Prefix
	trustedSet bool
	trustedN   int // number of TrustedProxies options given
	hops       int
	hopsSet    bool
	hopsN      int // number of TrustedHops options given
	source     source
	sources    int // number of source options given
	header     string
	fromCtx    func(context.Context) netip.Addr
	v6bits     int
	v4bits     int
	maxHops    int
	nat64      []netip.Prefix
	nat64Set   bool
	nat64N     int // number of NAT64Prefixes options given
}

// TrustedProxies declares the reverse proxies in front of this server. Only
// when the connecting peer (RemoteAddr) falls within one of the prefixes is
// a forwarding header read at all; then [FromXForwardedFor] (the default) or
// [FromForwarded] walks the chain right to left, skipping every hop within
// the prefixes, and the first address outside them is the client. A peer
// outside the prefixes is the client itself, whatever headers it sent.
//
// IPv4-mapped IPv6 prefixes (::ffff:10.0.0.0/104) are turned into their
// IPv4 form, so that either notation trusts the same peers (see
// [NormalizePrefix]). A prefix shorter than /96 (::/80) stays IPv6 and
// trusts no IPv4 peer, mapped or not.
//
// A prefix with bits set past its length (10.0.0.5/16, an interface's
// address as `ip addr` shows it) is an error of [IP], which names both
// what it may mean: the proxy alone (10.0.0.5/32) or its network
// (10.0.0.0/16), every host of which would be trusted to name any client.
//
// A server listening on a Unix socket has no peer address (net/http sets
// RemoteAddr to "@"), so no peer is within the prefixes and every request
// yields [ErrNoClientIP]: behind a proxy on a Unix socket, use
// [TrustedHops].
//
// Giving no prefix, or prefixes that hold every address of a family, one
// alone (0.0.0.0/0, ::/0, ::ffff:0:0/96) or together (0.0.0.0/1 and
// 128.0.0.0/1, the 256 IPv4 /8s, ::/1 and 8000::/1: every peer of that
// family a proxy, every hop of it skipped, the client whatever it wrote of
// the other family), is an error of [IP], a [*TrustAllError]; IPv6 prefixes that leave out
// only IPv4-mapped addresses, which are compared as IPv4, hold all of
// IPv6. When the proxies' addresses are unknown, use [TrustedHops]. So is
// giving TrustedProxies twice: list every proxy's prefix in one, as a
// second would otherwise silently replace the first. Exclusive with
// [TrustedHops].
func TrustedProxies(prefixes ...netip.Prefix) IPOption {
	ps := make([]netip.Prefix, len(prefixes))
	copy(ps, prefixes)
	return func(c *ipConfig) { c.trusted, c.trustedSet, c.trustedN = ps, true, c.trustedN+1 }
}

// TrustedHops declares that exactly n reverse proxies stand between the
// internet and this server, each appending to X-Forwarded-For (or
// Forwarded). The client is then the n-th entry from the right. RemoteAddr
// is not checked: every peer counts as the nearest proxy, so the network
// must make sure that only the proxies can reach this server (as a Unix
// socket only the local proxy can reach does). Prefer [TrustedProxies]
// whenever the proxies' addresses are known.
//
// A chain with fewer than n entries yields [ErrNoClientIP]. n must be at
// least 1 and at most the entries walked ([MaxHops], [DefaultMaxHops]
// unless set). Given twice, it is an error of [IP]. Exclusive with
// [TrustedProxies].
func TrustedHops(n int) IPOption {
	return func(c *ipConfig) { c.hops, c.hopsSet, c.hopsN = n, true, c.hopsN+1 }
}

// FromXForwardedFor reads the client from X-Forwarded-For, walked right to
// left over all its header lines (as if they were one comma-separated
// list). It is the default source once [TrustedProxies] or [TrustedHops] is
// given. Entries may be bare addresses, "[v6]", "[v6]:port" or "v4:port".
//
// Every trusted proxy must append to X-Forwarded-For: a header that the
// nearest proxy passes through untouched (one that writes only Forwarded,
// say) is the client's own, and its rightmost entry is whatever the client
// chose.
func FromXForwardedFor() IPOption {
	return func(c *ipConfig) { c.source, c.sources = srcXFF, c.sources+1 }
}

// FromForwarded reads the client from the RFC 7239 Forwarded header
// instead of X-Forwarded-For: the for= parameter of each element, walked
// right to left. Commas and semicolons inside quoted values do not split
// elements or pairs, and an obfuscated port ("192.0.2.43:_p") is dropped
// like any port. A trusted element without for=, with malformed quoting or
// with a backslash anywhere (no address needs an escape) is malformed and
// yields [ErrNoClientIP]. One whose node is "unknown" or an obfuscated
// identifier ("_hidden", RFC 7239 section 6) is valid but names no
// address: at the hop the client would be taken from (under
// [TrustedProxies] any such hop reached, as no prefix holds it; under
// [TrustedHops] the n-th) the client cannot be identified, and the key is
// [ErrNoClientIP], as for a peer without an address, so that a fallback
// declared with [FirstOf] or the policy's key action decides; a proxy's
// hop right of the client's under TrustedHops is passed over, its address
// unchecked as RemoteAddr's is. Requires [TrustedProxies] or [TrustedHops].
//
// Every trusted proxy must append to Forwarded (or the edge must drop the
// client's): many proxies write X-Forwarded-For only (nginx's
// $proxy_add_x_forwarded_for) and pass a Forwarded header through as the
// client sent it, and reading that one lets the client choose its key.
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
// value. The list headers X-Forwarded-For and Forwarded are refused (IP
// returns an error): read them with [FromXForwardedFor] and [FromForwarded].
// So is Host, which names the server, and which net/http moves out of the
// header map of an incoming request (to r.Host).
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
//
// Many providers delegate a /56 or a /48 to one subscriber, who can then
// rotate through 256 or 65,536 /64s, a key each. Where that matters (a
// login policy, say), stack a second, looser policy keyed by a shorter
// prefix, such as IPv6Prefix(48), over the /64 one: it bounds what one
// delegation gets while the /64 policy keeps neighbours apart.
func IPv6Prefix(bits int) IPOption { return func(c *ipConfig) { c.v6bits = bits } }

// IPv4Prefix sets the prefix length IPv4 clients are grouped by (default
// [DefaultIPv4Prefix], one key per address). It must be within 1..32.
func IPv4Prefix(bits int) IPOption { return func(c *ipConfig) { c.v4bits = bits } }

// MaxHops sets how many forwarding-header entries are examined at most
// (default [DefaultMaxHops]). A blank header line counts as an entry here,
// though it is otherwise skipped. When the walk has not found the client
// after that many entries, the result is [ErrNoClientIP]. It must be
// within 1..1024.
func MaxHops(n int) IPOption { return func(c *ipConfig) { c.maxHops = n } }

// maxMaxHops is the largest MaxHops.
const maxMaxHops = 1024

// NAT64Prefixes declares the network-specific prefixes (RFC 6052) of the
// IPv4/IPv6 translators in front of this server, such as a SIIT-DC
// translator (RFC 7755) handing an IPv6-only service its IPv4 clients.
// Such a translator writes every IPv4 client as an address of its prefix
// with the client's IPv4 address embedded, so grouped by an IPv6 prefix
// they would share keys: a /96 prefix is one /64, one bucket for every
// IPv4 client behind the translator. An address within a declared prefix
// is keyed as the IPv4 address it embeds, grouped by [IPv4Prefix], as a
// client of the well-known prefix 64:ff9b::/96 is without any option.
//
// Each prefix must be IPv6 and 32, 40, 48, 56, 64 or 96 bits long, the
// lengths of RFC 6052 section 2.2, which places the IPv4 address after the
// prefix and skips bits 64..71 (the u-octet). Below /96 an address with
// any of those bits set is no address the translator wrote: it is keyed
// as the IPv6 address it is, grouped by [IPv6Prefix]. The suffix, which a
// translator leaves zero, is ignored. A /96 prefix with bits 64..71 set,
// which RFC 6052 forbids but translators accept (the u-bit means nothing
// in an identifier not made from a MAC address, RFC 7136), is accepted.
//
// A network-specific prefix, unlike the well-known one, may carry a
// non-global IPv4 address (RFC 6052 section 3.1): a translator of an IPv4
// realm of its own, whose 10.0.0.1 need not be the 10.0.0.1 this server
// sees directly. Such a client is keyed by its IPv6 address alone (its
// suffix cleared): neither with the translator's other clients nor as
// that private address.
//
// 64:ff9b:1::/48 is set aside for local translation (RFC 8215), at a
// length within it that each network chooses, so no IPv4 address is read
// from it undeclared. A translator writes one address per IPv4 client,
// whatever the length, so an address of 64:ff9b:1::/48 is keyed by
// itself, not by its /64, unless a declared prefix holds it: the
// translated clients of an undeclared local-use translator neither share
// a key nor get more than one each, but are not keyed as their IPv4
// addresses, nor grouped by IPv4Prefix. Declare the prefix to have that.
//
// The prefixes apply to the client's address once it is found, whatever
// its source; the trusted proxies are found among the addresses as they
// came, translated or not. Invalid prefixes, a prefix with bits set past its length, two
// prefixes that overlap (which one embeds the address would be
// ambiguous), one that overlaps 64:ff9b::/96 other than that prefix
// itself, no prefix at all or the option given twice are errors of [IP].
// The slice is copied.
func NAT64Prefixes(prefixes ...netip.Prefix) IPOption {
	ps := make([]netip.Prefix, len(prefixes))
	copy(ps, prefixes)
	return func(c *ipConfig) { c.nat64, c.nat64Set, c.nat64N = ps, true, c.nat64N+1 }
}
