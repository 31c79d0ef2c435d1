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
type walker struct {
	lines []string
	cur   string
	more  bool // cur still holds an entry, possibly empty
}

// next returns the next entry from the right, trimmed of optional white
// space, and false when the header is exhausted. Empty header lines (what
// net/http makes of blank ones) are skipped; an empty entry inside a line
// ("a,,b"), or one longer than maxEntryLen, is returned as "".
func (w *walker) next() (string, bool) {
	for !w.more {
		if len(w.lines) == 0 {
			return "", false
		}
		w.cur = w.lines[len(w.lines)-1]
		w.lines = w.lines[:len(w.lines)-1]
		w.more = w.cur != ""
	}
	lo := max(0, len(w.cur)-maxEntryLen-1)
	var e string
	if i := strings.LastIndexByte(w.cur[lo:], ','); i >= 0 {
		e, w.cur = w.cur[lo+i+1:], w.cur[:lo+i]
	} else if lo > 0 {
		// Overlong: give up on this header rather than scan on.
		e, w.cur, w.more, w.lines = "", "", false, nil
	} else {
		e, w.cur, w.more = w.cur, "", false
	}
	return trimOWS(e), true
}

// walk finds the client in a forwarding header (X-Forwarded-For, or
// Forwarded when forwarded is true), right to left. With TrustedHops n the
// client is the n-th entry; with TrustedProxies it is the first entry
// outside them. Any malformed entry met before the client ends the walk
// with an error (fail closed: nothing left of garbage can be trusted), and
// so does reaching MaxHops entries.
func (c *ipConfig) walk(lines []string, forwarded bool) (netip.Addr, error) {
	w := walker{lines: lines}
	for i := 0; ; i++ {
		e, ok := w.next()
		if !ok {
			switch {
			case i == 0:
				return netip.Addr{}, errNoHeader
			case c.hopsSet:
				return netip.Addr{}, errShortChain
			default:
				return netip.Addr{}, errAllTrusted
			}
		}
		if i >= c.maxHops {
			return netip.Addr{}, errTooManyHops
		}
		var a netip.Addr
		if forwarded {
			a, ok = parseForwardedFor(e)
		} else {
			a, ok = parseHostAddr(e)
		}
		if !ok {
			return netip.Addr{}, errBadEntry
		}
		if c.hopsSet {
			if i+1 == c.hops {
				return a, nil
			}
			continue
		}
		if !c.isTrusted(a) {
			return a, nil
		}
	}
}

// parseForwardedFor returns the address in the for= parameter of one
// RFC 7239 Forwarded element, such as
//
//	for=192.0.2.60;proto=http;by=203.0.113.43
//	for="[2001:db8:cafe::17]:4711"
//
// Parameter names are case-insensitive. The element must hold exactly one
// for= whose node is an IP address (optionally with a port); "unknown",
// obfuscated identifiers ("_hidden") and malformed quoting are rejected.
// Quoted values may not contain escapes: no address needs one.
func parseForwardedFor(elem string) (netip.Addr, bool) {
	var node string
	found := false
	for elem != "" {
		var pair string
		if i := strings.IndexByte(elem, ';'); i >= 0 {
			pair, elem = elem[:i], elem[i+1:]
		} else {
			pair, elem = elem, ""
		}
		name, value, ok := strings.Cut(trimOWS(pair), "=")
		if !ok {
			return netip.Addr{}, false
		}
		if len(value) > 0 && value[0] == '"' {
			if len(value) < 2 || value[len(value)-1] != '"' {
				return netip.Addr{}, false
			}
			value = value[1 : len(value)-1]
			if strings.ContainsAny(value, "\"\\") {
				return netip.Addr{}, false
			}
		} else if strings.ContainsAny(value, "\"\\") {
			return netip.Addr{}, false
		}
		if strings.EqualFold(name, "for") {
			if found {
				return netip.Addr{}, false
			}
			node, found = value, true
		}
	}
	if !found {
		return netip.Addr{}, false
	}
	return parseHostAddr(node)
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
