package logparse

import (
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// clfLayout is the time layout of the Common Log Format: [10/Oct/2000:13:55:36 -0700].
const clfLayout = "02/Jan/2006:15:04:05 -0700"

// timeCache remembers the last time text parsed: consecutive lines of an
// access log share their second.
type timeCache struct {
	text   string
	t      time.Time
	layout int // JSON lines: the index in timeLayouts that matched last
}

func (c *timeCache) parse(layout, s string) (time.Time, error) {
	if s == c.text && s != "" {
		return c.t, nil
	}
	t, err := parseTime(layout, s)
	if err != nil {
		return time.Time{}, err
	}
	c.text, c.t = strings.Clone(s), t
	return t, nil
}

// errZone reports a UTC offset out of range.
var errZone = errors.New("UTC offset out of range")

// parseTime is time.Parse that also reads a leap second, second 60 (which
// RFC 3339 allows and time.Parse refuses), as the instant after second 59,
// and refuses a UTC offset at the end of s whose hours pass 23 or whose
// minutes pass 59 (time.Parse takes +2400 and +23:60), as RFC 3339 does.
func parseTime(layout, s string) (time.Time, error) {
	if !zoneInRange(s) {
		return time.Time{}, errZone
	}
	t, err := time.Parse(layout, s)
	if err == nil {
		return t, nil
	}
	// The seconds: the first "60" after "hh:mm:" that ends the field (no
	// digit or ':' next); the parse with 59 checks the rest.
	i := 0
	for {
		j := strings.Index(s[i:], ":60")
		if j < 0 {
			return t, err
		}
		i += j + 1
		if i >= 4 && s[i-4] == ':' && (i+2 == len(s) || s[i+2] != ':' && (s[i+2] < '0' || s[i+2] > '9')) {
			break
		}
	}
	t59, err59 := time.Parse(layout, s[:i]+"59"+s[i+2:])
	if err59 != nil || t59.Second() != 59 {
		return t, err
	}
	return t59.Add(time.Second), nil
}

// zoneInRange reports whether the numeric UTC offset ending s, if any
// ("+0530", "-07:00"), has hours 00 to 23 and minutes 00 to 59.
func zoneInRange(s string) bool {
	var hh, mm string
	switch n := len(s); {
	case n >= 6 && (s[n-6] == '+' || s[n-6] == '-') && s[n-3] == ':':
		hh, mm = s[n-5:n-3], s[n-2:]
	case n >= 5 && (s[n-5] == '+' || s[n-5] == '-'):
		hh, mm = s[n-4:n-2], s[n-2:]
	default:
		return true
	}
	return hh <= "23" && mm <= "59"
}

// parseCLF parses one line of the Common or Combined Log Format:
//
//	host ident authuser [time] "request" status bytes ["referer" ["user-agent"]]
//
// Fields a custom format appends (Apache's %D, nginx's $request_time) are
// not read, after the bytes as after the User-Agent.
//
// The authuser field runs to the " [" of the time field, the first that
// a time and a quoted request follow: it may hold spaces and brackets, as
// a client sent them. Apache's vhost_common and vhost_combined formats put the virtual
// host first ("%v %h ..." or "%v:%p %h ...", as Debian's
// other_vhosts_access.log): a first field that is no IP address (nor a
// list) followed by one that is, is that virtual host, skipped.
//
// A host field that is a comma-separated list ("203.0.113.7, 10.0.0.2",
// with or without spaces, before a comma too) is the X-Forwarded-For
// header that a server behind a proxy logs in place of the address (Apache's
// "%{X-Forwarded-For}i %l %u %t ...", nginx's "$http_x_forwarded_for - ..."):
// the entry carries it as its X-Forwarded-For header, for the
// configuration's trusted proxies or hops to choose the client from, as
// the middleware would, and its last entry as the address, in place of the
// peer the log does not give (the proxy). Whichever of the list's entries
// the trusted proxies make the client, the key is the one the middleware
// would have found: a last entry that is not a trusted proxy's is the
// client both ways.
//
// A single IP address is the address, and also the X-Forwarded-For header
// of one entry: the log does not say whether it is the peer (%h) or the
// header a proxy set (%{X-Forwarded-For}i behind one proxy, which appends
// only its own peer, the client). Read both ways, a request keys as the
// middleware would key the request with that peer and that header: with
// no trusted proxies by the peer; with trusted proxies by the peer unless
// it is a trusted one (then by no key either way); with trusted hops,
// which never read the peer, by the header: its address under one hop, no
// key under more. A host name (%h with HostnameLookups) is no header.
//
// A Combined line that ends with a third quoted field holding an
// X-Forwarded-For list, nginx's stock "main" format
// ("... "$http_user_agent" "$http_x_forwarded_for""), has that list as its
// X-Forwarded-For header, as sent, and its single address (the peer,
// $remote_addr) as the address, as a JSON line with those variables has:
// the middleware would choose the client from that header, a client's
// "unknown" in it too ("unknown, 203.0.113.7"), where it reads no entry
// left of the client. The field is taken for the header when its last
// entry, the nearest proxy's, is what a proxy writes (see isForwardedFor);
// a "-" there (no header) leaves the rule above.
//
// The strings of e are substrings of line.
func parseCLF(line string, tc *timeCache, hs *headerSlab, e *Entry) error {
	var ok bool
	var host, user, rest string
	if host, rest, ok = strings.Cut(line, " "); !ok || host == "" {
		return errors.New("no client address")
	}
	forwarded := ""
	// A list has a comma in its first word, or the next word begins with
	// one (a space before the comma: "203.0.113.7 , 10.0.0.2").
	listed := strings.IndexByte(host, ',') >= 0 || strings.HasPrefix(rest, ",")
	if !listed && !isAddr(host) {
		// Apache's vhost_common and vhost_combined ("%v %h ...",
		// "%v:%p %h ..."): the virtual host, then the client's address.
		if word, r2, ok := strings.Cut(rest, " "); ok && isAddr(word) {
			host, rest = word, r2
		}
	}
	if listed {
		// The list runs on while a word ends with a comma, or the next
		// begins with one.
		n := len(host)
		for line[n-1] == ',' || strings.HasPrefix(rest, ",") {
			word, r2, ok := strings.Cut(rest, " ")
			if !ok {
				return errors.New("no ident field")
			}
			n += 1 + len(word)
			rest = r2
		}
		forwarded = line[:n]
		last, err := lastForwarded(forwarded)
		if err != nil {
			return err
		}
		host = last
	} else if isAddr(host) {
		forwarded = host
	}
	if _, rest, ok = strings.Cut(rest, " "); !ok { // ident
		return errors.New("no ident field")
	}
	if !strings.Contains(rest, " ") {
		return errors.New("no user field")
	}
	// The user runs to the [time] field: Apache's %u and nginx's
	// $remote_user log the user name a client sent as sent, spaces and
	// brackets unescaped, so the time field is the first " [" that a
	// time and a quoted request follow (among the first maxUserBrackets
	// followed by a digit, so that a line of brackets costs no more than
	// a few lines); the first " [" when none does, for the error.
	var (
		t       time.Time
		request string
		err     error
	)
	for from, tries := 0, 0; ; tries++ {
		i := strings.Index(rest[from:], " [")
		if i < 0 || tries == maxUserBrackets {
			if tries == 0 {
				return errors.New("no [time] field")
			}
			return err
		}
		i += from
		from = i + 1
		if tries > 0 && (i+3 >= len(rest) || rest[i+2] < '0' || rest[i+2] > '9') {
			tries-- // no time ("[10/Mar/2024:..."): not tried
			continue
		}
		var r2 string
		var terr error
		if t, request, r2, terr = timeAndRequest(rest[i+1:], tc); terr == nil {
			user, rest, err = rest[:i], r2, nil
			break
		}
		if tries == 0 {
			err = terr
		}
		if !strings.Contains(rest[i+1:], "]") {
			return err // no later " [" has its ']' either
		}
	}
	rest = strings.TrimLeft(rest, " ")
	status, rest, _ := strings.Cut(rest, " ")
	code, err := strconv.Atoi(status)
	if err != nil || code < 100 || code > 999 {
		return errors.New("bad status " + strconv.Quote(status))
	}
	rest = strings.TrimLeft(rest, " ")
	_, rest, _ = strings.Cut(rest, " ") // bytes
	rest = strings.TrimLeft(rest, " ")
	*e = Entry{Time: t, Addr: host, Status: code}
	if forwarded != "" {
		e.Headers = hs.one(Header{Name: "X-Forwarded-For", Value: forwarded})
	}
	if user != "-" {
		e.User = user
	}
	if err := parseRequestLine(request, e); err != nil {
		return err
	}
	// Combined: "referer" "user-agent". What a custom format appends, after
	// the bytes or after the User-Agent (%D, $request_time, $host), is not
	// read: a field after the bytes that is not quoted is such an addition.
	if strings.HasPrefix(rest, `"`) {
		ref, r2, err := quoted(rest)
		if err != nil {
			return errors.New("referer " + err.Error())
		}
		if ref != "-" {
			e.Referer = ref
		}
		r2 = strings.TrimLeft(r2, " ")
		if !strings.HasPrefix(r2, `"`) {
			return nil // the Referer alone
		}
		ua, r3, err := quoted(r2)
		if err != nil {
			return errors.New("user agent " + err.Error())
		}
		if ua != "-" {
			e.UserAgent = ua
		}
		// nginx's "main" format: "$http_x_forwarded_for" last.
		if xff, end, err := quoted(strings.TrimLeft(r3, " ")); err == nil && !listed && strings.TrimSpace(end) == "" && isForwardedFor(xff) {
			e.Headers = hs.one(Header{Name: "X-Forwarded-For", Value: xff})
		}
	}
	return nil
}

// maxUserBrackets bounds the " [" of a Common Log Format line tried as the
// start of its time field (see parseCLF).
const maxUserBrackets = 8

// timeAndRequest parses the start of s, "[time] "request"", and returns
// the time, the request and what follows. The time is the Common Log
// Format's, or RFC 3339 (nginx's $time_iso8601 in its place).
func timeAndRequest(s string, tc *timeCache) (time.Time, string, string, error) {
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return time.Time{}, "", "", errors.New("unterminated [time] field")
	}
	t, err := tc.parse(clfLayout, s[1:end])
	if err != nil && end > 11 && s[11] == 'T' {
		// nginx's $time_iso8601 in place of $time_local.
		t, err = tc.parse(time.RFC3339, s[1:end])
	}
	if err != nil {
		return time.Time{}, "", "", errors.New("bad time " + strconv.Quote(s[1:end]))
	}
	request, rest, err := quoted(strings.TrimLeft(s[end+1:], " "))
	if err != nil {
		return time.Time{}, "", "", errors.New("request " + err.Error())
	}
	return t, request, rest, nil
}

// isAddr reports whether s is an IP address.
func isAddr(s string) bool {
	_, err := netip.ParseAddr(s)
	return err == nil
}

// isForwardedFor reports whether s, a quoted field, is an X-Forwarded-For
// header as the nearest proxy leaves it: a comma-separated list whose last
// entry (spaces around it allowed) is an IP address, possibly with a port
// or, for IPv6, in brackets ("192.0.2.1:58312", "[2001:db8::1]:443", as
// some proxies write them; the middleware's keyfunc.IP reads them too), or
// "unknown", as proxies write an address they do not know. The entries
// left of it are not looked at: a client writes them as it pleases
// ("unknown, 203.0.113.7"), and the middleware, walking the header from
// the right, reads none left of the client.
func isForwardedFor(s string) bool {
	last := s
	if i := strings.LastIndexByte(s, ','); i >= 0 {
		last = s[i+1:]
	}
	last = strings.Trim(last, " \t")
	if strings.EqualFold(last, "unknown") || isAddr(last) {
		return true
	}
	if _, err := netip.ParseAddrPort(last); err == nil {
		return true
	}
	return len(last) > 2 && last[0] == '[' && last[len(last)-1] == ']' && isAddr(last[1:len(last)-1])
}

// A headerSlab hands out one-header slices cut from a shared array, so
// that the X-Forwarded-For header nearly every Common Log Format entry
// carries costs no allocation of its own. Each slice has its own element
// and a capacity of one (an append copies), so an entry may be kept.
type headerSlab []Header

// one returns a slice holding h alone.
func (hs *headerSlab) one(h Header) []Header {
	if len(*hs) == 0 {
		*hs = make([]Header, 256)
	}
	s := (*hs)[:1:1]
	*hs = (*hs)[1:]
	s[0] = h
	return s
}

// lastForwarded returns the last entry of an X-Forwarded-For list,
// without the spaces around it; every entry must be non-empty.
func lastForwarded(list string) (string, error) {
	last := ""
	for entry := range strings.SplitSeq(list, ",") {
		if last = strings.Trim(entry, " \t"); last == "" {
			return "", errors.New("empty entry in the X-Forwarded-For list")
		}
	}
	return last, nil
}

// quoted returns the leading "..." of s (backslash escapes kept as is) and
// what follows.
func quoted(s string) (string, string, error) {
	if len(s) == 0 || s[0] != '"' {
		return "", s, errors.New("field is not quoted")
	}
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			return s[1:i], s[i+1:], nil
		}
	}
	return "", s, errors.New("field has no closing quote")
}

// parseRequestLine fills e's Method, Path, Query and Proto from "GET
// /path?q HTTP/1.1". An absolute URL loses its scheme and host. A path
// with a '%' that two hex digits do not follow is an error: the request
// line is as the client sent it, and no server let such a request reach a
// handler (net/http, nginx and Apache answer 400).
func parseRequestLine(req string, e *Entry) error {
	method, rest, ok := strings.Cut(req, " ")
	if !ok || !isToken(method) {
		return errors.New("bad request line " + strconv.Quote(clip(req)))
	}
	// The protocol is the last word when it is one (a target logged
	// unescaped may hold spaces; an HTTP/0.9 request line has none).
	target, proto := rest, ""
	if i := strings.LastIndexByte(rest, ' '); i >= 0 && strings.HasPrefix(rest[i+1:], "HTTP/") {
		target, proto = rest[:i], rest[i+1:]
	}
	e.Method, e.Proto = method, proto
	if err := setTarget(target, e); err != nil {
		return err
	}
	if strings.IndexByte(e.Path, '%') >= 0 {
		if _, err := url.PathUnescape(e.Path); err != nil {
			return errors.New("request target " + strconv.Quote(clip(target)) + " has an invalid %-escape: the server answered 400 before any handler")
		}
	}
	return nil
}

func setTarget(target string, e *Entry) error {
	// The asterisk form of OPTIONS and the authority form of CONNECT
	// (RFC 9112 3.2.3, 3.2.4) stand as they are: no route has them.
	if target == "*" && e.Method == "OPTIONS" || e.Method == "CONNECT" && isAuthority(target) {
		e.Path, e.Query = target, ""
		return nil
	}
	if i := strings.Index(target, "://"); i > 0 && !strings.HasPrefix(target, "/") {
		target = target[i+3:]
		if j := strings.IndexByte(target, '/'); j >= 0 {
			target = target[j:]
		} else {
			target = "/"
		}
	}
	if target == "" || target[0] != '/' {
		return errors.New("bad request target " + strconv.Quote(clip(target)))
	}
	e.Path, e.Query, _ = strings.Cut(target, "?")
	return nil
}

// isAuthority reports whether s has the shape of CONNECT's host:port.
func isAuthority(s string) bool {
	i := strings.LastIndexByte(s, ':')
	if i <= 0 || i == len(s)-1 || strings.ContainsAny(s, "/?# ") {
		return false
	}
	_, err := strconv.ParseUint(s[i+1:], 10, 16)
	return err == nil
}

func isToken(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}
