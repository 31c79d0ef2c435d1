package middleware

import (
	"errors"
	"fmt"
	"math/bits"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"weak"

	"github.com/ratekeeper/ratekeeper/internal/errlist"
	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// ErrForwardingIgnored is told to the error handler (once per Middleware,
// and again after [Middleware.ApplyConfig] applies a configuration whose
// trusted proxies differ) the first time the forwarding check (on by
// default; [CheckForwarding], [CheckForwardingFrom]) sees a request
// carrying a forwarding header (X-Forwarded-For, Forwarded, X-Real-IP, or
// the header the ip keys read) that the key of a policy applying to it
// ignores, keying the request by the peer's address, as keyfunc.IP does
// for a peer it does not trust as a proxy. Behind a reverse proxy or load
// balancer that is a misconfiguration with a large effect: every request
// is keyed by the proxy's address, so every client shares one limit, and
// one busy client locks all the others out.
//
// The check asks the keys themselves. For such a request it calls the
// key function of each policy that applies to it up to three times: on
// the request as it is, on a copy from another peer address (the first
// bit of the peer's flipped, the port kept), and, when the key differs
// there, on a copy without the headers that name an address
// (X-Forwarded-For, Forwarded, X-Real-IP, the header named to
// CheckForwardingFrom, and any other with a line whose first entry, up
// to a comma, is an address); a key with a route part that finds no
// route there (before routing) is handed the one the middleware's
// pattern function finds (policy.NoRoute when it finds none, a 404), as
// the middleware hands it. The copies are
// made after the key ran on the request (they see a form it parsed
// there) and carry no body: a key reading the body reads none of the
// request's, which keeps it whole for the decision and the handler (on a
// copy such a key fails or falls back, and is not reported). A key
// buckets the request by its peer when the second key differs from the
// first and the third does not.
// So a key that trusts the peer as a proxy (keyfunc.TrustedProxies,
// TrustedHops: it reads the client from the header) is never reported,
// whatever the check was told, nor is a key of no client IP (a user, an
// API key, keyfunc.Global), nor a keyfunc.FirstOf(user, ip) for a
// request with a user; that key is reported for an anonymous request. A
// key that fails, or panics, on the request or a copy is not reported
// either. Only the policies that apply to the request are asked: a
// per-IP limit restricted to POST /login is reported at the first
// forwarded POST /login. Beyond that, it is reported in two cases:
//
//   - No proxy is declared to the check (a configuration without
//     trusted_proxies or trusted_hops, or, for a middleware built in
//     code, no [CheckForwardingFrom]): the first request from any peer is
//     reported. The fix is to declare the proxies and the header they
//     write to the keys (keyfunc.TrustedProxies, trusted_proxies). On a
//     server that clients reach directly such a header is their own
//     invention, rightly ignored, and the report can be ignored too (or
//     the check turned off, [CheckForwarding](false), or told of no
//     public peer by naming the proxies, [CheckForwardingFrom]).
//   - Trusted proxies are declared to the check, and the request comes
//     from a peer outside them whose address is private (RFC 1918),
//     loopback, link-local, unique local (fc00::/7) or of the shared
//     address space (100.64.0.0/10, RFC 6598): no internet client has
//     such an address, so the peer is most likely a proxy the prefixes
//     leave out (the load balancer at 10.0.0.5 when 10.1.0.0/16 is
//     trusted). The fix is to add its prefix. A header from a public peer
//     outside them is not reported: that is more likely a client writing
//     its own, which the keys rightly ignore. Under keyfunc.TrustedHops
//     (trusted_hops) every peer's header is read, and nothing is
//     reported.
//
// A key is not asked about every such request. One seen to read the
// headers of a peer is asked no more about that peer's requests (the
// check remembers 8 peers per rule set), and one found not the peer's
// (its key the same from the other address, or failing) on 32 forwarded
// requests it applies to is asked no more at all. Both hold for a rule
// set: [Middleware.SetPolicies], [Middleware.SetLimit] and
// [Middleware.ApplyConfig] make a new one, whose keys are asked anew. So
// a key of no client IP behind a proxy costs the check at most 64 calls
// of its function (a JWT's signature checked, an API key looked up) and
// 32 copies of a request per rule set (and those of requests asked
// concurrently with the 32nd), not two calls on every request; and
// a keyfunc.FirstOf(user, ip) is reported at the first anonymous
// forwarded request only if that comes before 32 with a user: beyond,
// it may go unreported (with one request in ten anonymous, 3 times in
// 100; with one in two, practically never).
//
// The message names the header, the peer's address, the policy whose key
// is the peer's and, in the second case, the trusted proxies it is not
// among; never the header's value.
//
// When the middleware logs ([WithLogger], or a [LogObserver] among its
// observers), the warning is logged too, at Warn ("ratekeeper: setup
// warning"); with neither a log nor an error handler, it is logged so on
// [log/slog.Default]. The request is served as without the check: this is a
// warning, not a failure. A request whose
// RemoteAddr a middleware further out has already replaced with the
// client's address is not reported: the ip key reads that address. Such a
// RemoteAddr is known by having no port (chi's RealIP; gorilla's
// ProxyHeaders from an entry without one, an IPv6 address perhaps in
// brackets), or an obfuscated one (ProxyHeaders given Forwarded:
// for="[2001:db8::1]:_hidden"), which net/http never writes, or, when it
// has a real one (gorilla's ProxyHeaders given
// Forwarded: for="[2001:db8::1]:4711" leaves "[2001:db8::1]:4711"), by
// being the address a forwarding header of the request names as the
// client (its first entry).
var ErrForwardingIgnored = errors.New("middleware: a request carries a forwarding header that the client-IP key ignores")

// Forwarding check states (Middleware.fwd).
const (
	fwdOff      uint32 = iota // not checked
	fwdChecking               // checked until the first report
	fwdTold                   // reported: not checked any more
)

// forwardingHeaders are the headers a reverse proxy sets with the address
// of the client it forwards, in canonical form. Three: carriedHeader
// looks each up in turn, unrolled.
var forwardingHeaders = [3]string{"X-Forwarded-For", "Forwarded", "X-Real-Ip"}

// proxies is what the forwarding check knows of the proxies the ip keys
// trust (Middleware.fwdProxies); nil when the check is on in code by
// default, or by CheckForwarding(true) alone: the keys are taken to trust
// none.
type proxies struct {
	trusted []netip.Prefix // the trusted proxies, as keyfunc.NormalizePrefix leaves them; none: no proxy declared
	hops    bool           // TrustedHops: every peer's header is read
	header  string         // the header the keys read from a trusted peer, canonical; "" when none is declared
	config  bool           // declared by a configuration (else by CheckForwardingFrom)
}

// CheckForwarding turns on (or off) the check for forwarding headers that
// the middleware's client-IP keys ignore (see [ErrForwardingIgnored]).
//
// The check is on by default. It asks the keys of the policies that apply
// to a request carrying a forwarding header whether they key it by its
// peer's address (see [ErrForwardingIgnored]), and reports the first
// such request, from any peer, once: behind a reverse proxy such keys
// give every client the proxy's limit. Keys that trust the proxy
// (keyfunc.TrustedProxies, keyfunc.TrustedHops) and keys of no client IP
// are not reported: there is nothing to tell the check for them. On a
// server clients reach directly, a client's own X-Forwarded-For to a
// per-IP policy is reported likewise, once, and ignored: the key stays
// the peer's. [CheckForwardingFrom] names the proxies to the check, which
// then reports only peers with a proxy's address outside them, not a
// public client's own header. CheckForwarding(false) turns the check
// off, for a server whose report was read; CheckForwarding(true)
// restates the default. A check on
// by default leaves the requests that a middleware further out decided
// (one nested in another, as a login limit inside a global one) to that
// middleware's check, which the application may have given the proxies
// ([CheckForwardingFrom]) or turned off; given explicitly, it checks
// them too.
//
// The check looks at each request that policies apply to for the
// forwarding headers (three map lookups, four when the keys read another
// header), and, when one is there, parses the peer's address (and, when
// proxies are declared to it, compares it with their prefixes: a request
// from within them ends there), looks up what it remembers of the rule
// set's keys (an atomic load and a comparison of weak pointers), and asks
// the keys it has not done with: each key function that applies is
// called on the request and on a copy from another peer address (the
// copy, its address and a copy of its headers allocated), and, when the key differs
// there, on a copy without the headers that name an address (an
// allocation, and the header map). It is done with a policy's key for
// a peer once it has seen it read that peer's headers (it remembers 8
// peers per rule set; behind more, a peer it has no room for counts as
// below), and for good once it has found it not the peer's on 32
// forwarded requests (see [ErrForwardingIgnored]), until a new rule
// set ([Middleware.SetPolicies], [Middleware.SetLimit],
// [Middleware.ApplyConfig]). A correct setup behind a proxy, whether its
// keys trust the proxy or read no client IP, thus costs, after its first
// forwarded requests, the look-ups and no allocation per request. After
// the first report the check looks no more (until a configuration
// applied declares other proxies); with a setup that needs no report it
// never comes, and the look-ups go on for as long as the middleware
// serves. Off, the check costs one atomic load per request.
//
// [FromConfig], which sees the keys, turns it on only when a policy of
// the configuration keys by ip and the configuration declares no
// trusted_hops (with trusted_hops every peer's header is read: nothing is
// ever ignored), and
// compares the peer with the configuration's trusted_proxies, if any, and
// names its ip_source; [Middleware.ApplyConfig] turns it on or off, and
// takes the proxies, for each configuration applied, unless this option
// was given (the proxies, unless CheckForwardingFrom was). The options may
// come in any order; of CheckForwarding and CheckForwardingFrom, the last
// given decides whether the check is on.
func CheckForwarding(on bool) Option {
	return func(m *Middleware) error {
		m.fwdExplicit, m.fwdWanted = true, on
		return nil
	}
}

// CheckForwardingFrom turns on the check for forwarding headers that the
// middleware's client-IP keys ignore (see [ErrForwardingIgnored]) for keys
// that trust the proxies within prefixes and read header from them:
// keyfunc.IP(keyfunc.TrustedProxies(prefixes...)) with
// keyfunc.FromXForwardedFor (header "X-Forwarded-For", the default),
// keyfunc.FromForwarded ("Forwarded") or keyfunc.FromHeader(header). Give
// it the prefixes the keys trust, one slice for both:
//
//	proxies := []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}
//	ip, err := keyfunc.IP(keyfunc.TrustedProxies(proxies...))
//	...
//	m, err := middleware.New(store, policies, middleware.CheckForwardingFrom("X-Forwarded-For", proxies...))
//
// A request from a peer outside the prefixes whose address only a proxy
// has (private, loopback, link-local, unique local, shared), that
// carries header, or another forwarding header, and that a policy's key
// buckets by that peer (see [ErrForwardingIgnored]) is then reported,
// once: most likely a proxy the prefixes leave out, behind which every
// client shares one limit. A header from a public peer (a client's own)
// is not. The check asks the keys all the same: prefixes other than
// theirs cause no report of a proxy they trust. The cost is that of
// [CheckForwarding]. The prefixes
// are compared as keyfunc.TrustedProxies compares them
// (keyfunc.NormalizePrefix).
//
// The prefixes are kept over those of a configuration ([FromConfig],
// [ConfigOptions], [Middleware.ApplyConfig]). No prefix, an invalid one,
// or a header that is no valid field name, is an error of [New] (each
// problem, one per line).
// CheckForwarding(false) given after it turns the check off.
func CheckForwardingFrom(header string, prefixes ...netip.Prefix) Option {
	ps := slices.Clone(prefixes)
	return func(m *Middleware) error {
		var errs []error // every problem, one per line
		if len(ps) == 0 {
			errs = append(errs, errors.New("middleware: CheckForwardingFrom: no prefix given (for keys that trust no proxy, the check is on by default)"))
		}
		if !validFieldName(header) {
			errs = append(errs, fmt.Errorf("middleware: CheckForwardingFrom: header %q is not a valid header name", header))
		}
		px := &proxies{header: http.CanonicalHeaderKey(header), trusted: make([]netip.Prefix, len(ps))}
		for i, p := range ps {
			if !p.IsValid() {
				errs = append(errs, fmt.Errorf("middleware: CheckForwardingFrom: prefix %d is invalid", i))
				continue
			}
			px.trusted[i] = keyfunc.NormalizePrefix(p)
		}
		if len(errs) > 0 {
			return errlist.Join(errs)
		}
		m.fwdExplicit, m.fwdWanted = true, true
		m.fwdFromExplicit = true
		m.fwdProxies.Store(px)
		return nil
	}
}

// validFieldName reports whether s is a header field name: a token (RFC
// 9110 section 5.1).
func validFieldName(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// configChecksForwarding reports whether cfg keys some policy by ip and
// declares no trusted_hops: the configurations for which FromConfig
// checks forwarding headers.
func configChecksForwarding(cfg *policy.Config) bool {
	if cfg.TrustedHops > 0 {
		return false
	}
	for _, d := range cfg.Definitions {
		for _, k := range d.Key {
			if slices.Contains(k, "ip") {
				return true
			}
		}
	}
	return false
}

// configProxies returns the proxies that the ip keys of cfg trust.
func configProxies(cfg *policy.Config) *proxies {
	px := &proxies{hops: cfg.TrustedHops > 0, config: true}
	if px.hops || len(cfg.TrustedProxies) == 0 {
		return px
	}
	px.trusted = make([]netip.Prefix, len(cfg.TrustedProxies))
	for i, p := range cfg.TrustedProxies {
		px.trusted[i] = keyfunc.NormalizePrefix(p)
	}
	switch s := cfg.IPSource; {
	case s == "" || s == "x-forwarded-for":
		px.header = "X-Forwarded-For"
	case s == "forwarded":
		px.header = "Forwarded"
	case strings.HasPrefix(s, "header:"):
		if name := strings.TrimPrefix(s, "header:"); validFieldName(name) {
			px.header = http.CanonicalHeaderKey(name)
		}
	}
	return px
}

// wantConfig is the option of a configuration (see ConfigOptions): the
// forwarding check as cfg asks, unless CheckForwarding or
// CheckForwardingFrom decides it, compared with the proxies of cfg,
// unless CheckForwardingFrom names them. New starts the check once every
// option has run.
func wantConfig(cfg *policy.Config) Option {
	return func(m *Middleware) error {
		if !m.fwdExplicit {
			m.fwdWanted = configChecksForwarding(cfg)
		}
		if !m.fwdFromExplicit {
			m.fwdProxies.Store(configProxies(cfg))
		}
		return nil
	}
}

// followConfig turns the forwarding check on or off as cfg, a
// configuration applied, asks (see configChecksForwarding), unless
// CheckForwarding or CheckForwardingFrom decided it, and compares the
// peers with the proxies of cfg from now on, unless CheckForwardingFrom
// named them. A check that has reported stays quiet while the proxies it
// compares with stay the same; a configuration declaring others is a new
// setup, and the check looks again. It requires m.rules.mu (see follow).
func (m *Middleware) followConfig(cfg *policy.Config) {
	changed := false
	if !m.fwdFromExplicit {
		px := configProxies(cfg)
		changed = !px.same(m.fwdProxies.Swap(px))
	}
	if changed {
		// Off stays off: only a check that has reported looks again.
		m.fwd.CompareAndSwap(fwdTold, fwdChecking)
	}
	if m.fwdExplicit {
		return
	}
	if configChecksForwarding(cfg) {
		m.fwd.CompareAndSwap(fwdOff, fwdChecking)
	} else {
		m.fwd.CompareAndSwap(fwdChecking, fwdOff)
	}
}

// same reports whether px and q declare the same proxies, read the same
// way; a nil q (none known yet) is not.
func (px *proxies) same(q *proxies) bool {
	if q == nil {
		return false
	}
	return px.hops == q.hops && px.header == q.header && px.config == q.config && slices.Equal(px.trusted, q.trusted)
}

// checkForwarding tells the error handler, the first time, that r carries
// a forwarding header the client-IP keys ignore (see ErrForwardingIgnored).
// A RemoteAddr that is a bare address, with no port, is not the peer's
// (net/http always gives host:port): a middleware further out (chi's
// RealIP, gorilla's ProxyHeaders) put the client's address there, which
// the ip key reads, so the header is no sign of a shared limit and r is
// not reported. Nor is r when RemoteAddr's address is the client a
// forwarding header names (see namedClient): gorilla's ProxyHeaders
// copies a Forwarded or X-Forwarded-For entry with its port,
// "[2001:db8::1]:4711", the form of a peer. A real peer so named is the
// client itself, which the ip key reads too; a client that names itself
// only spares its own request, and the next request without that header
// is reported.
//
// With trusted proxies declared, r is reported only when its peer is
// outside them and has an address only a proxy has (see proxyKind).
// The cheap tests come first: a request through a trusted proxy, every
// request of a correct setup, costs the header lookups, the parse of
// RemoteAddr and the prefix comparisons, and allocates nothing. Without
// trusted proxies, what the check remembers of the keys (see pending)
// comes before the tests of a rewritten RemoteAddr, which parse the
// headers: a correct setup's request costs the header lookups, the
// parse of RemoteAddr and that look-up.
func (m *Middleware) checkForwarding(r *http.Request, set *policy.Set, mask uint64) {
	px := m.fwdProxies.Load()
	if px != nil && px.hops {
		return
	}
	h := carriedHeader(r, px)
	if h == "" {
		return
	}
	if px == nil || len(px.trusted) == 0 {
		if px == nil && !m.fwdExplicit && r.Context().Value(outerKey{}) != nil {
			// On by default, knowing of no proxy, and nested in a
			// middleware that decided r further out: that one speaks for
			// the deployment (checking by default too, given the proxies
			// the keys trust, or turned off), and a second report of the
			// request would be noise, or false.
			return
		}
		mask, known := m.pending(r, set, mask)
		if mask == 0 || rewrittenRemoteAddr(r) || rewrittenUpstream(r) {
			return
		}
		name := m.peerKeyed(r, set, mask, known)
		if name == "" || !m.fwd.CompareAndSwap(fwdChecking, fwdTold) {
			return
		}
		if px == nil {
			m.warn(r, fmt.Errorf("%w: a request from %s carries %s, which the key of policy %q ignores: it keys the request by the peer's address, as keyfunc.IP() does from a peer it does not trust as a proxy, so that behind a reverse proxy every client shares the proxy's limit; there, declare the proxies to the ip keys (keyfunc.TrustedProxies or TrustedHops) with the header they set (keyfunc.FromXForwardedFor, FromForwarded, FromHeader), and, for the check to leave alone a header from a peer whose address is public (a client's own), name the proxies to it too (CheckForwardingFrom); when clients reach this server directly (the header is theirs, and ignored: the key stays the peer's), ignore this, or turn the check off with CheckForwarding(false)",
				ErrForwardingIgnored, peerAddr(r.RemoteAddr), h, name))
			return
		}
		m.warn(r, fmt.Errorf("%w: a request from %s carries %s, and the configuration declares no trusted proxies, so the ip key of policy %q reads the peer's address; behind a reverse proxy every client then shares the proxy's limit: declare the proxies (trusted_proxies or trusted_hops; keyfunc.TrustedProxies or TrustedHops in code) and the header they set (ip_source; keyfunc.FromXForwardedFor, FromForwarded, FromHeader), or, when clients reach this server directly, ignore this",
			ErrForwardingIgnored, peerAddr(r.RemoteAddr), h, name))
		return
	}
	// A RemoteAddr that is no "host:port" is either rewritten further
	// out (the key reads the client there) or no address at all (a Unix
	// socket: the key fails); no limit is shared in either case.
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return
	}
	peer := ap.Addr().Unmap().WithZone("")
	if px.trusts(peer) {
		return
	}
	kind := proxyKind(peer)
	if kind == "" {
		return
	}
	mask, known := m.pending(r, set, mask)
	if mask == 0 || rewrittenUpstream(r) {
		return
	}
	name := m.peerKeyed(r, set, mask, known)
	if name == "" || !m.fwd.CompareAndSwap(fwdChecking, fwdTold) {
		return
	}
	fix := "keyfunc.TrustedProxies, and CheckForwardingFrom"
	if px.config {
		fix = "trusted_proxies"
	}
	m.warn(r, fmt.Errorf("%w: a request from %s carries %s, but %s is not among the trusted proxies (%s), the only peers whose forwarding header the ip key reads, so the key of policy %q is the peer's address; a %s address is a proxy's rather than a client's, and behind a proxy left out every client shares its limit: add the proxy's prefix to the trusted proxies (%s), or, if this peer is no proxy of yours, ignore this",
		ErrForwardingIgnored, peer, h, peer, prefixList(px.trusted), name, kind, fix))
}

// carriedHeader returns the first forwarding header r carries: the one
// the keys read (px.header), then the usual ones; "" when r carries none.
func carriedHeader(r *http.Request, px *proxies) string {
	if px != nil && px.header != "" {
		return carriedOwnHeader(r, px.header)
	}
	// Unrolled, three look-ups (a fourth header would not compile).
	h := r.Header
	if _, ok := h[forwardingHeaders[0]]; ok {
		return forwardingHeaders[0]
	}
	if _, ok := h[forwardingHeaders[1]]; ok {
		return forwardingHeaders[1]
	}
	if _, ok := h[forwardingHeaders[2]]; ok {
		return forwardingHeaders[2]
	}
	return ""
}

// carriedOwnHeader is carriedHeader when the keys read own.
func carriedOwnHeader(r *http.Request, own string) string {
	if _, ok := r.Header[own]; ok {
		return own
	}
	for _, h := range &forwardingHeaders {
		if h == own {
			continue
		}
		if _, ok := r.Header[h]; ok {
			return h
		}
	}
	return ""
}

// trusts reports whether peer, unmapped and without zone, is within a
// trusted proxy's prefix.
func (px *proxies) trusts(peer netip.Addr) bool {
	for _, p := range px.trusted {
		if p.Contains(peer) {
			return true
		}
	}
	return false
}

// sharedSpace is the shared address space of carrier-grade NAT (RFC 6598),
// which a provider's load balancers use too (and no internet client has).
var sharedSpace = netip.MustParsePrefix("100.64.0.0/10")

// proxyKind names the kind of a, unmapped and without zone, when it is an
// address only a proxy near this server can have, not an internet client:
// "private" (RFC 1918), "unique local" (fc00::/7), "loopback",
// "link-local" or "shared (RFC 6598)"; "" for any other.
func proxyKind(a netip.Addr) string {
	switch {
	case a.IsPrivate() && a.Is4():
		return "private"
	case a.IsPrivate():
		return "unique local"
	case a.IsLoopback():
		return "loopback"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case sharedSpace.Contains(a):
		return "shared (RFC 6598)"
	}
	return ""
}

// maxListed is how many trusted prefixes a report lists.
const maxListed = 4

// prefixList returns ps for a message: the first maxListed, and how many
// more.
func prefixList(ps []netip.Prefix) string {
	var b strings.Builder
	for i, p := range ps {
		if i == maxListed {
			fmt.Fprintf(&b, ", and %d more", len(ps)-maxListed)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// rewrittenUpstream reports whether the address of r.RemoteAddr
// ("host:port") is the client that one of r's forwarding headers names.
func rewrittenUpstream(r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	peer := ap.Addr().Unmap().WithZone("")
	for _, h := range forwardingHeaders {
		if a, ok := namedClient(h, r.Header[h]); ok && a == peer {
			return true
		}
	}
	return false
}

// maxNamedLine is how much of a forwarding header's first line namedClient
// reads: enough for any first entry a proxy writes, and a bound on the
// cost of a hostile header, which is read on every request until the
// check reports.
const maxNamedLine = 512

// namedClient returns the client that header h, with lines vs, names as a
// middleware that rewrites RemoteAddr reads it: the address of the first
// line's first entry (X-Forwarded-For), its first for= parameter
// (Forwarded), or the whole first line (X-Real-Ip). The address may carry
// a port, or be an IPv6 one in brackets; it is unmapped and without zone.
func namedClient(h string, vs []string) (netip.Addr, bool) {
	if len(vs) == 0 {
		return netip.Addr{}, false
	}
	v := vs[0]
	if len(v) > maxNamedLine {
		v = v[:maxNamedLine]
	}
	switch h {
	case "X-Forwarded-For":
		v, _, _ = strings.Cut(v, ",")
	case "Forwarded":
		v = forwardedFor(v)
	}
	v = strings.Trim(v, " \t")
	// The usual entry, an address alone, first: read so, it costs no
	// error of ParseAddrPort (an allocation), which the check would pay
	// on every request of a correct setup.
	var a netip.Addr
	if b, ok := parseBareAddr(v); ok {
		a = b
	} else if ap, err := netip.ParseAddrPort(v); err == nil {
		a = ap.Addr()
	} else {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

// forwardedFor returns the value of the first for= parameter of a
// Forwarded line (elements separated by ',', parameters by ';'), its
// quotes removed, or "".
func forwardedFor(line string) string {
	for elem := range strings.SplitSeq(line, ",") {
		for pair := range strings.SplitSeq(elem, ";") {
			name, value, ok := strings.Cut(strings.Trim(pair, " \t"), "=")
			if ok && strings.EqualFold(name, "for") {
				return strings.Trim(value, `"`)
			}
		}
	}
	return ""
}

// rewrittenRemoteAddr reports whether r.RemoteAddr is not the "host:port"
// net/http writes for a peer, but an address the ip key reads all the
// same: one with no port ("192.0.2.1", "2001:db8::1", "fe80::1%eth0", an
// IPv6 one in brackets, as chi's RealIP or gorilla's ProxyHeaders leave
// it) or with an obfuscated port (RFC 7239 section 6.3, as ProxyHeaders
// leaves a Forwarded field's for="[2001:db8::1]:_hidden"). A middleware
// further out has put the client there. The ip key itself (remoteAddrKey)
// tells, so that the two never disagree on what an address is.
func rewrittenRemoteAddr(r *http.Request) bool {
	if _, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return false
	}
	_, err := remoteAddrKey(r)
	return err == nil
}

// remoteAddrKey is the ip key of the peer, RemoteAddr, the key the
// forwarding check is about.
var remoteAddrKey = keyfunc.Must(keyfunc.IP())

// parseBareAddr parses remoteAddr when it is an address with no port: as
// it is ("192.0.2.1", "2001:db8::1", "fe80::1%eth0"), or an IPv6 one in
// brackets ("[2001:db8::1]").
func parseBareAddr(remoteAddr string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(remoteAddr); err == nil {
		return a, true
	}
	if n := len(remoteAddr); n > 2 && remoteAddr[0] == '[' && remoteAddr[n-1] == ']' {
		if a, err := netip.ParseAddr(remoteAddr[1 : n-1]); err == nil && a.Is6() {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// peerAddr returns the address of remoteAddr ("host:port") for a message:
// the address alone, or, when it is not one, remoteAddr quoted and cut to
// 64 bytes (it comes from the server, but may be any text a test or a
// custom listener put there).
func peerAddr(remoteAddr string) string {
	if ap, err := netip.ParseAddrPort(remoteAddr); err == nil {
		return ap.Addr().String()
	}
	if a, err := netip.ParseAddr(remoteAddr); err == nil {
		return a.String()
	}
	if len(remoteAddr) > 64 {
		remoteAddr = remoteAddr[:64]
	}
	return strconv.Quote(remoteAddr)
}

// maxReadPeers is how many peers the forwarding check remembers as ones
// whose forwarding headers the keys read (see readPeers): enough for the
// proxies in front of a server.
const maxReadPeers = 8

// maxProbes is how many forwarded requests that find a policy's key not
// the peer's (see probes) the forwarding check asks it about, per rule
// set. Such a key is never reported, so without a bound it would be
// asked, and a request copied for it, on every forwarded request for as
// long as the middleware serves, multiplying the cost of an application's
// key (a JWT's signature checked, an API key looked up) for good. 32
// costs, for each rule set, at most 64 calls of the key and 32 copies of
// a request: microseconds to a few milliseconds, once. The bound only
// hides a key that is the peer's on some requests and not on others, as
// keyfunc.FirstOf(user, ip) is (the peer's for anonymous requests): its
// first anonymous forwarded request goes unreported when 32 signed-in
// ones came before it, a chance of 0.9^32 (3%) when one request in ten is
// anonymous, of 0.5^32 when one in two. 16 would miss the first case
// 19% of the time; 64 would double the cost, which recurs with each new
// rule set (an adaptive controller's SetLimit makes one at each change
// of level). A key found reading the headers of a peer (a proxy it
// trusts) when the memory of such peers is full (maxReadPeers) counts
// too: behind more proxies than that, taking turns, its requests would
// be asked about for good. Past its budget such a key goes unasked: a
// proxy its trust leaves out goes unreported if its first request comes
// after that. (Told of the proxies, CheckForwardingFrom, the check asks
// no key about a request from among them.)
const maxProbes = 32

// readPeers is what the forwarding check remembers of the keys of the
// policies of set (see peerKeyed): the peers (proxies) whose forwarding
// headers they were seen to read, reads[i] having a bit for each such
// policy of set (in Set order) for peers[i], and the probes of the keys
// found not the peer's. It is immutable but for the counts in probes,
// which every readPeers of set shares; the check replaces it. It holds
// set weakly: a rule set replaced is not kept alive for it.
type readPeers struct {
	set    weak.Pointer[policy.Set]
	probes *probes // never nil
	n      int
	peers  [maxReadPeers]netip.Addr
	reads  [maxReadPeers]uint64
}

// probes counts, for each policy of a rule set (in Set order), the
// forwarded requests on which the forwarding check found its key not the
// peer's: failing, or the same with another peer. A policy counted
// maxProbes times is spent: its key is asked no more. Concurrent
// requests each count theirs (none is lost); those asked while the
// maxProbes-th was are asked beyond the bound, one per request in
// flight then.
type probes struct {
	spent atomic.Uint64 // the policies counted maxProbes times
	n     [policy.MaxPolicies]atomic.Uint32
}

// count counts a probe for each policy of mask.
func (p *probes) count(mask uint64) {
	for rest := mask; rest != 0; rest &= rest - 1 {
		i := bits.TrailingZeros64(rest)
		if p.n[i].Add(1) >= maxProbes {
			p.spent.Or(1 << i)
		}
	}
}

// of reports whether rp is the memory of set. It reads rp.set rather
// than making set's weak pointer to compare (weak.Make takes a lock of
// the runtime's, which every forwarded request would take): set is
// alive, so the value is set exactly when rp.set is set's.
func (rp *readPeers) of(set *policy.Set) bool {
	return rp != nil && rp.set.Value() == set
}

// read returns the policies whose keys read the forwarding headers of
// peer, as far as rp knows.
func (rp *readPeers) read(peer netip.Addr) uint64 {
	for i := range rp.n {
		if rp.peers[i] == peer {
			return rp.reads[i]
		}
	}
	return 0
}

// pending returns the policies of mask (those of set that apply to r)
// whose keys the check is not done with for r: neither spent (see probes)
// nor seen to read the forwarding headers of r's peer (see readPeers);
// and what the check remembers of set (m.fwdRead), or nil when that is
// another set's, or none. It costs an atomic load, a comparison of weak
// pointers, and when some policy is left, the parse of RemoteAddr and a
// look-up among the peers.
func (m *Middleware) pending(r *http.Request, set *policy.Set, mask uint64) (uint64, *readPeers) {
	known := m.fwdRead.Load()
	if !known.of(set) {
		return mask, nil
	}
	if mask &^= known.probes.spent.Load(); mask == 0 {
		return 0, known
	}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		mask &^= known.read(ap.Addr().Unmap().WithZone(""))
	}
	return mask, known
}

// peerKeyed returns the name of a policy of mask in set (the policies
// that apply to r, and that the check is not done with: see pending)
// whose key buckets r by its peer's address, ignoring the forwarding
// headers r carries, or "" when none does: the only setup the forwarding
// check reports. The key function is asked up to three times, as the
// request is, with another peer, and (when that changes the key) without
// the headers that name an address (X-Forwarded-For, Forwarded,
// X-Real-Ip, the one the check was told of, and any other with a line
// whose first entry is an address): it keys r by the peer when its key
// changes with the peer and not without those headers. A key that reads
// no address (a user, an API key, a constant), or that reads the client
// from the headers (it trusts the peer as a proxy), does not; nor does one that
// fails (or panics) on r or on a copy, which is not reported: the check
// is a warning, given only when sure. A policy whose key was seen to read
// the headers of a peer is not asked again for that peer's requests
// (readPeers), and one whose key was found not the peer's (reading no
// address, or failing) on maxProbes forwarded requests is not asked again
// at all (probes), so that a correct setup behind a proxy costs, after
// its first requests, the look-ups of pending and no allocation. known is
// what pending returned.
func (m *Middleware) peerKeyed(r *http.Request, set *policy.Set, mask uint64, known *readPeers) string {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	var peer netip.Addr // invalid when RemoteAddr is no address: nothing is remembered
	if err == nil {
		peer = ap.Addr().Unmap().WithZone("")
	}
	return m.askKeys(r, set, mask, ap, peer, known)
}

// askKeys is peerKeyed for the policies of mask, neither spent nor known
// to read the headers of peer (r's, with port as ap; invalid when
// RemoteAddr is no address), over known (m.fwdRead when it is set's, else
// nil).
func (m *Middleware) askKeys(r *http.Request, set *policy.Set, mask uint64, ap netip.AddrPort, peer netip.Addr, known *readPeers) string {
	movedAddr := "[" + r.RemoteAddr + "]" // a custom listener's text, which a key may read as it is
	if peer.IsValid() {
		movedAddr = netip.AddrPortFrom(otherAddr(ap.Addr()), ap.Port()).String()
	}
	// probe returns a copy of r from remote with header h, made after the
	// key ran on r (so that it sees what the key parsed there, a form)
	// and with no body: a key that reads the body reads nothing of r's,
	// which r still has for the decision and the handler, on a copy
	// (it fails there, or falls back, and is taken for a key of no
	// peer's, or one reading the headers: a report missed, never the
	// request changed).
	probe := func(remote string, h http.Header) *http.Request {
		c := *r
		c.Body, c.GetBody, c.ContentLength = http.NoBody, nil, 0
		c.RemoteAddr, c.Header = remote, h
		return &c
	}
	// The route handed to a key that finds none on the request (before
	// routing, with a pattern function), as the middleware hands it
	// (policy.Set.Prepare): the one the function finds, or, when it
	// finds none (a 404), policy.NoRoute; asked for once.
	route, asked := "", false
	ask := func(key keyfunc.Func, req *http.Request) (string, bool) {
		k, err := probeKey(key, req)
		if errors.Is(err, keyfunc.ErrNoRoute) && m.pattern != nil {
			if !asked {
				route, asked = m.pattern(r), true
				if route == "" {
					route = policy.NoRoute
				}
			}
			k, err = probeKey(key, req.WithContext(keyfunc.WithRoute(req.Context(), route)))
		}
		return k, err == nil
	}
	var read, notPeer uint64
	name := ""
	for rest := mask; rest != 0; rest &= rest - 1 {
		i := bits.TrailingZeros64(rest)
		key := set.Policy(i).Key()
		k, ok := ask(key, r)
		if !ok {
			notPeer |= 1 << i
			continue
		}
		if km, ok := ask(key, probe(movedAddr, r.Header.Clone())); !ok || km == k {
			notPeer |= 1 << i
			continue // not the peer's: the key reads no address here
		}
		if kb, ok := ask(key, probe(r.RemoteAddr, withoutAddresses(r.Header, m.fwdProxies.Load()))); !ok || kb != k {
			read |= 1 << i // the key reads the client from the headers
			continue
		}
		name = set.Policy(i).Name()
		break
	}
	if name != "" || read == 0 && notPeer == 0 {
		return name // reported: the check ends
	}
	known = m.memoryOf(known, set)
	known.probes.count(notPeer)
	if read != 0 && peer.IsValid() {
		m.rememberRead(known, peer, read)
	}
	return ""
}

// memoryOf returns what the check remembers of set: known (what
// m.fwdRead held, or nil) when it is set's, else m.fwdRead when it has
// become set's, else a new memory of set, without peers or probes, put in
// m.fwdRead in place of another set's.
func (m *Middleware) memoryOf(known *readPeers, set *policy.Set) *readPeers {
	if known.of(set) {
		return known
	}
	for {
		cur := m.fwdRead.Load()
		if cur.of(set) {
			return cur
		}
		rp := &readPeers{set: weak.Make(set), probes: new(probes)}
		if m.fwdRead.CompareAndSwap(cur, rp) {
			return rp
		}
	}
}

// rememberRead records that the keys of the policies read of known's set
// read the forwarding headers of peer, over known (m.fwdRead, or what it
// held). A concurrent record may be lost: the policies are asked again
// then.
func (m *Middleware) rememberRead(known *readPeers, peer netip.Addr, read uint64) {
	rp := new(readPeers)
	*rp = *known
	for i := range rp.n {
		if rp.peers[i] == peer {
			rp.reads[i] |= read
			m.fwdRead.CompareAndSwap(known, rp)
			return
		}
	}
	if rp.n == maxReadPeers {
		// Full: the oldest goes, and the probe counts against the
		// budget of the policies read (see maxProbes): behind more
		// proxies than the memory holds, taking turns, they would be
		// asked about again at each request for good.
		known.probes.count(read)
		copy(rp.peers[:], rp.peers[1:])
		copy(rp.reads[:], rp.reads[1:])
		rp.n--
	}
	rp.peers[rp.n], rp.reads[rp.n] = peer, read
	rp.n++
	m.fwdRead.CompareAndSwap(known, rp)
}

// probeKey returns the key key gives r, or an error: the key function's,
// or one for an empty key or a panic.
func probeKey(key keyfunc.Func, r *http.Request) (k string, err error) {
	defer func() {
		if recover() != nil {
			k, err = "", errKeyPanicked
		}
	}()
	k, err = key(r)
	if err == nil && k == "" {
		err = errEmptyProbeKey
	}
	return k, err
}

// The failures of probeKey that are not the key function's errors.
var (
	errKeyPanicked   = errors.New("middleware: the key function panicked")
	errEmptyProbeKey = errors.New("middleware: the key function returned an empty key")
)

// otherAddr returns an address of a's family in another network than a
// for any prefix length a key groups addresses by (its first bit
// flipped), so that a key of the peer's address changes with it.
func otherAddr(a netip.Addr) netip.Addr {
	if a.Is4() || a.Is4In6() {
		b := a.Unmap().As4()
		b[0] ^= 0x80
		return netip.AddrFrom4(b)
	}
	b := a.As16()
	b[0] ^= 0x80
	return netip.AddrFrom16(b)
}

// withoutAddresses returns a copy of h without the headers that name an
// address: the forwarding headers, the one px names, and any with a line
// whose first entry (up to a comma) is an address, with or without a
// port (a proxy's own header, as keyfunc.FromHeader reads it: its last
// line, the proxy's, after any the client sent, "unknown" say).
func withoutAddresses(h http.Header, px *proxies) http.Header {
	out := make(http.Header, len(h))
	for name, vs := range h {
		if slices.Contains(forwardingHeaders[:], name) || px != nil && name == px.header || namesAddress(vs) {
			continue
		}
		out[name] = vs
	}
	return out
}

// namesAddress reports whether a line of vs, a header's, starts with an
// address (see namedClient).
func namesAddress(vs []string) bool {
	for i := range vs {
		if _, ok := namedClient("X-Forwarded-For", vs[i:i+1]); ok {
			return true
		}
	}
	return false
}
