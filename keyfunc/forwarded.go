package keyfunc

import (
	"net/netip"
	"strings"
)

// maxEntryLen is the longest forwarding-header entry the walker returns.
// A longer one is reported as empty, which both parsers reject: no address
// or Forwarded element a proxy writes comes near it, and stopping the
// search for its comma there keeps one giant entry from costing a scan of
// the whole header.
const maxEntryLen = 512

// walker yields the comma-separated entries of a header's lines from the
// right: the last entry of the last line first. It never splits the whole
// header: each step looks back to the previous comma only, and at most
// maxEntryLen+1 bytes, so examining k entries costs at most k times that,
// whatever the header's size. Entries are substrings of the header;
// walking allocates nothing.
//
// With quoted set (Forwarded), a comma between double quotes does not
// separate entries. Quotes are paired from the right: the right end of the
// header is written by the proxies nearest to us, so an unbalanced quote
// the client sent, at the left, cannot change how the proxies' entries are
// split. (A backslash-escaped quote can; parseForwardedFor rejects every
// entry holding a backslash, and the first entry a miscounted quote could
// affect is the one that holds it.)
type walker struct {
	lines  []string
	cur    string
	more   bool // cur still holds an entry, possibly empty
	quoted bool
}

// next returns the next entry from the right, trimmed of optional white
// space, and false when the header is exhausted. An empty header line
// (what net/http makes of a blank one) is returned with blank set, so that
// the caller can skip it and still count it; an empty entry inside a line
// ("a,,b"), or one longer than maxEntryLen, is returned as "" with blank
// unset.
func (w *walker) next() (e string, blank, ok bool) {
	if !w.more {
		if len(w.lines) == 0 {
			return "", false, false
		}
		w.cur = w.lines[len(w.lines)-1]
		w.lines = w.lines[:len(w.lines)-1]
		if w.cur == "" {
			return "", true, true
		}
		w.more = true
	}
	lo := max(0, len(w.cur)-maxEntryLen-1)
	if i := w.lastComma(w.cur[lo:]); i >= 0 {
		e, w.cur = w.cur[lo+i+1:], w.cur[:lo+i]
	} else if len(w.cur) > maxEntryLen {
		// Overlong: give up on this header rather than scan on.
		e, w.cur, w.more, w.lines = "", "", false, nil
	} else {
		e, w.cur, w.more = w.cur, "", false
	}
	return trimOWS(e), false, true
}

// exhausted reports whether next has nothing more to return, without
// reading the header.
func (w *walker) exhausted() bool { return !w.more && len(w.lines) == 0 }

// lastComma returns the index of the last comma of s that separates
// entries, or -1.
func (w *walker) lastComma(s string) int {
	if !w.quoted {
		return strings.LastIndexByte(s, ',')
	}
	in := false
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case '"':
			in = !in
		case ',':
			if !in {
				return i
			}
		}
	}
	return -1
}

// walk finds the client in a forwarding header (X-Forwarded-For, or
// Forwarded when forwarded is true), right to left. With TrustedHops n the
// client is the n-th entry; with TrustedProxies it is the first entry
// outside them. Any malformed entry met before the client ends the walk
// with an error (fail closed: nothing left of garbage can be trusted), and
// so does taking more than MaxHops steps, a step being an entry or a
// blank header line (skipped, but counted so that a flood of them is not
// scanned to the end).
//
// A Forwarded element naming its node "unknown" or by an obfuscated
// identifier (RFC 7239 sections 6.2, 6.3) is valid but names no address.
// Where the client would be taken from it (the n-th entry; under
// TrustedProxies any such entry reached, since no prefix can hold it) the
// walk ends with errHiddenClient, as a peer without an address does; a
// proxy's hop right of the client's under TrustedHops is not checked, as
// RemoteAddr is not, and is passed over.
func (c *ipConfig) walk(lines []string, forwarded bool) (netip.Addr, error) {
	w := walker{lines: lines, quoted: forwarded}
	hops := 0 // entries examined
	for steps := 0; ; steps++ {
		if steps >= c.maxHops && !w.exhausted() {
			// Asked before next, which would look for the start of
			// one entry more: no byte past the MaxHops-th is read.
			return netip.Addr{}, errTooManyHops
		}
		e, blank, ok := w.next()
		if !ok {
			switch {
			case hops == 0:
				return netip.Addr{}, errNoHeader
			case c.hopsSet:
				return netip.Addr{}, errShortChain
			default:
				return netip.Addr{}, errAllTrusted
			}
		}
		if blank {
			continue
		}
		hops++
		var a netip.Addr
		hidden := false
		if forwarded {
			a, hidden, ok = parseForwardedFor(e)
		} else {
			a, ok = parseHostAddr(e)
		}
		if !ok {
			return netip.Addr{}, errBadEntry
		}
		if c.hopsSet {
			if hops < c.hops {
				continue
			}
		} else if !hidden && c.isTrusted(a) {
			continue
		}
		if hidden {
			return netip.Addr{}, errHiddenClient
		}
		return a, nil
	}
}

// parseForwardedFor returns the address in the for= parameter of one
// RFC 7239 Forwarded element, such as
//
//	for=192.0.2.60;proto=http;by=203.0.113.43
//	for="[2001:db8:cafe::17]:4711"
//	for="192.0.2.43:_hidden-port"
//
// Parameter names are tokens, compared case-insensitively; empty pairs (";;") are skipped,
// and a ';' between double quotes does not end a pair. The element must
// hold exactly one for= whose node is an IP address, optionally with a
// port or an obfuscated port (section 6.3), or else names no address:
// "unknown" (section 6.2, in any case) or an obfuscated identifier
// ("_hidden", section 6.3), optionally with a port or an obfuscated port,
// for which hidden is set and the address is the zero one. Malformed
// quoting is rejected (ok unset). No part of the element may contain a
// backslash: quoted values may not use escapes, which no node needs.
func parseForwardedFor(elem string) (a netip.Addr, hidden, ok bool) {
	if strings.IndexByte(elem, '\\') >= 0 {
		return netip.Addr{}, false, false
	}
	var node string
	found := false
	for elem != "" {
		pair := elem
		elem = ""
		in := false
	scan:
		for i := 0; i < len(pair); i++ {
			switch pair[i] {
			case '"':
				in = !in
			case ';':
				if !in {
					pair, elem = pair[:i], pair[i+1:]
					break scan
				}
			}
		}
		pair = trimOWS(pair)
		if pair == "" {
			continue
		}
		name, value, ok := strings.Cut(pair, "=")
		if !ok || !validHeaderName(name) {
			return netip.Addr{}, false, false
		}
		if len(value) > 0 && value[0] == '"' {
			if len(value) < 2 || value[len(value)-1] != '"' {
				return netip.Addr{}, false, false
			}
			value = value[1 : len(value)-1]
		}
		if strings.IndexByte(value, '"') >= 0 {
			return netip.Addr{}, false, false
		}
		if strings.EqualFold(name, "for") {
			if found {
				return netip.Addr{}, false, false
			}
			node, found = value, true
		}
	}
	if !found {
		return netip.Addr{}, false, false
	}
	if hiddenNode(node) {
		return netip.Addr{}, true, true
	}
	a, ok = parseHostAddr(stripObfPort(node))
	return a, false, ok
}

// hiddenNode reports whether node, a for= value without its quotes, names
// no address (RFC 7239 section 6): "unknown" in any case, or an obfuscated
// identifier ("_" and one or more letters, digits, '.', '_' or '-'),
// either optionally followed by ':' and a port (1 to 5 digits) or an
// obfuscated port.
func hiddenNode(node string) bool {
	name, port, hasPort := strings.Cut(node, ":")
	if hasPort {
		digits := len(port) >= 1 && len(port) <= 5
		for _, c := range []byte(port) {
			digits = digits && '0' <= c && c <= '9'
		}
		if !digits && !obfIdent(port) {
			return false
		}
	}
	return strings.EqualFold(name, "unknown") || obfIdent(name)
}

// obfIdent reports whether s is an obfuscated identifier of RFC 7239
// section 6.3: "_" followed by one or more letters, digits, '.', '_' or
// '-'.
func obfIdent(s string) bool {
	if len(s) < 2 || s[0] != '_' {
		return false
	}
	for _, c := range []byte(s[1:]) {
		if !obfChar(c) {
			return false
		}
	}
	return true
}

// obfChar reports whether c may follow the '_' of an obfuscated
// identifier or port.
func obfChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-'
}

// stripObfPort removes an obfuscated port (RFC 7239 section 6.3:
// ":_" followed by letters, digits, '.', '_' or '-') from a node whose
// address is IPv4 or a bracketed IPv6 one, so that the address is kept.
// Any other node is returned as it is.
func stripObfPort(node string) string {
	i := strings.LastIndex(node, ":_")
	if i < 0 || i+2 == len(node) {
		return node
	}
	if !obfIdent(node[i+1:]) {
		return node
	}
	host := node[:i]
	if strings.HasSuffix(host, "]") || !strings.Contains(host, ":") {
		return host
	}
	return node
}

// trimOWS trims the optional white space (space and tab) of RFC 9110.
func trimOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}
