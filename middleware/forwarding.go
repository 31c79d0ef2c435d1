package middleware

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/ratekeeper/ratekeeper/keyfunc"
	"github.com/ratekeeper/ratekeeper/policy"
)

// ErrForwardingIgnored is told to the error handler (once per Middleware)
// the first time a request carries a forwarding header (X-Forwarded-For,
// Forwarded, X-Real-IP) while the checked middleware keys clients by an
// address read from no proxy: the peer's own. Behind a reverse proxy
// or load balancer that is a misconfiguration with a large effect: every
// request comes from the proxy's address, so every client shares one
// limit, and one busy client locks all the others out. The fix is to
// declare the proxies (keyfunc.TrustedProxies or keyfunc.TrustedHops, or
// trusted_proxies or trusted_hops in a configuration file) and the header
// they write. On a server that clients reach directly such a header is
// their own invention, rightly ignored, and the report can be ignored too
// (or the check left off: [CheckForwarding]).
//
// When the middleware logs ([WithLogger], or a [LogObserver] among its
// observers), the warning is logged too, at Warn ("ratekeeper: setup
// warning"); with neither a log nor an error handler, it is logged so on
// [log/slog.Default]. The request is served as without the check: this is a
// warning, not a failure. The message names the header and the peer's address (the
// proxy's, when there is one), not the header's value. A request whose
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
var ErrForwardingIgnored = errors.New("middleware: a request carries a forwarding header that the client-IP key does not read (no trusted proxies)")

// Forwarding check states (Middleware.fwd).
const (
	fwdOff      uint32 = iota // not checked
	fwdChecking               // checked until the first report
	fwdTold                   // reported: not checked any more
)

// forwardingHeaders are the headers a reverse proxy sets with the address
// of the client it forwards, in canonical form.
var forwardingHeaders = [...]string{"X-Forwarded-For", "Forwarded", "X-Real-Ip"}

// CheckForwarding turns on (or off) the check for forwarding headers that
// the middleware's client-IP keys ignore (see [ErrForwardingIgnored]).
// Turn it on for a middleware whose policies key clients by
// keyfunc.IP with neither keyfunc.TrustedProxies nor keyfunc.TrustedHops,
// the default: until the first report, each request is looked at for the
// three headers (three map lookups), and then no more. The check tells
// the error handler ([WithErrorHandler]) and the log ([WithLogger], or a
// [LogObserver] among the observers, at Warn); without either, the log
// [log/slog.Default].
//
// [FromConfig] turns it on by itself when a policy of the configuration
// keys by ip and the configuration declares neither trusted_proxies nor
// trusted_hops, and [Middleware.ApplyConfig] turns it on or off for each
// configuration applied, unless this option was given. The options may
// come in any order.
func CheckForwarding(on bool) Option {
	return func(m *Middleware) error {
		m.fwdExplicit, m.fwdWanted = true, on
		return nil
	}
}

// configIgnoresForwarding reports whether cfg keys some policy by the
// peer's address with no proxy declared: the configurations for which
// FromConfig checks forwarding headers.
func configIgnoresForwarding(cfg *policy.Config) bool {
	if len(cfg.TrustedProxies) > 0 || cfg.TrustedHops > 0 {
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

// wantConfig is the option of a configuration (see ConfigOptions): the
// forwarding check as cfg asks, unless CheckForwarding decides it. New
// starts the check once every option has run.
func wantConfig(cfg *policy.Config) Option {
	return func(m *Middleware) error {
		if !m.fwdExplicit {
			m.fwdWanted = configIgnoresForwarding(cfg)
		}
		return nil
	}
}

// followConfig turns the forwarding check on or off as cfg, a
// configuration applied, asks (see configIgnoresForwarding), unless
// CheckForwarding decided it. A check that has reported stays quiet.
func (m *Middleware) followConfig(cfg *policy.Config) {
	if m.fwdExplicit {
		return
	}
	if configIgnoresForwarding(cfg) {
		m.fwd.CompareAndSwap(fwdOff, fwdChecking)
	} else {
		m.fwd.CompareAndSwap(fwdChecking, fwdOff)
	}
}

// checkForwarding tells the error handler, the first time, that r carries
// a forwarding header the client-IP keys ignore. A RemoteAddr that is a
// bare address, with no port, is not the peer's (net/http always gives
// host:port): a middleware further out (chi's RealIP, gorilla's
// ProxyHeaders) put the client's address there, which the ip key reads,
// so the header is no sign of a shared limit and r is not reported. Nor
// is r when RemoteAddr's address is the client a forwarding header names
// (see namedClient): gorilla's ProxyHeaders copies a Forwarded or
// X-Forwarded-For entry with its port, "[2001:db8::1]:4711", the form of
// a peer. A real peer so named is the client itself, which the ip key
// reads too; a client that names itself only spares its own request,
// and the next request without that header is reported.
func (m *Middleware) checkForwarding(r *http.Request) {
	if rewrittenRemoteAddr(r) {
		return
	}
	for _, h := range forwardingHeaders {
		if _, ok := r.Header[h]; !ok {
			continue
		}
		if rewrittenUpstream(r) {
			return
		}
		if !m.fwd.CompareAndSwap(fwdChecking, fwdTold) {
			return
		}
		m.warn(r, fmt.Errorf("%w: a request from %s carries %s; behind a reverse proxy every client then shares the proxy's limit: declare the proxies (keyfunc.TrustedProxies or TrustedHops; trusted_proxies or trusted_hops) and the header they set (keyfunc.FromXForwardedFor, FromForwarded, FromHeader; ip_source), or, when clients reach this server directly, ignore this",
			ErrForwardingIgnored, peerAddr(r.RemoteAddr), h))
		return
	}
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
	var a netip.Addr
	if ap, err := netip.ParseAddrPort(v); err == nil {
		a = ap.Addr()
	} else if b, ok := parseBareAddr(v); ok {
		a = b
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
