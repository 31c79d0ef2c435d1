package logparse

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/plural"
)

// The W3C Extended Log File Format (W3C Working Draft WD-logfile-960323),
// which IIS writes, as do CDNs and other servers: directive lines, starting
// with '#', describe the entries that follow them; #Fields names their
// fields, in order, and holds until the next #Fields. An entry's fields are
// separated by spaces, or by tabs when the line has one; a field may be
// quoted ("..." with "" for a quote); "-" is an empty field. Dates are
// YYYY-MM-DD and times HH:MM[:SS[.S]], in UTC; without a date field, the
// date is that of the last #Date (or #Start-Date) directive, and moves to
// the next day when the times pass midnight without a new #Date (see
// w3cState.rollover). IIS writes each space within a field as '+'.

// w3cDirectives are the directives of the format.
var w3cDirectives = []string{"Version", "Fields", "Software", "Start-Date", "End-Date", "Date", "Remark"}

// w3cDirective returns the name and value of the W3C directive line is
// ("#Fields: date time ..."), and whether it is one.
func w3cDirective(line string) (name, value string, ok bool) {
	if len(line) < 2 || line[0] != '#' {
		return "", "", false
	}
	name, value, ok = strings.Cut(line[1:], ":")
	if !ok {
		return "", "", false
	}
	for _, d := range w3cDirectives {
		if strings.EqualFold(name, d) {
			return d, strings.TrimSpace(value), true
		}
	}
	return "", "", false
}

// A w3cLayout is the layout a #Fields directive gives the entries after
// it: the index of each field read, or -1.
type w3cLayout struct {
	line int64 // of the directive
	n    int   // number of fields

	date, time, addr, dns, method, stem, query, uri, proto int
	user, status, ua, ref, xff                             int

	headers []w3cHeader
	// edge: a CDN's log (CloudFront's x-edge-* fields), whose c-ip is the
	// viewer and whose x-forwarded-for field the header the viewer sent;
	// the origin gets that header with c-ip appended.
	edge bool
	// problem says why the entries cannot be read ("has no time
	// field"); "" when they can.
	problem string
}

// A w3cHeader is a request header field of a layout: cs(Name), or the
// X-Forwarded-For custom field of IIS.
type w3cHeader struct {
	name string
	i    int
}

// newW3CLayout returns the layout of the #Fields directive of line n,
// whose value is fields.
func newW3CLayout(fields string, n int64) *w3cLayout {
	l := &w3cLayout{line: n, date: -1, time: -1, addr: -1, dns: -1, method: -1, stem: -1, query: -1, uri: -1, proto: -1, user: -1, status: -1, ua: -1, ref: -1, xff: -1}
	names := strings.Fields(fields)
	l.n = len(names)
	for i, name := range names {
		switch lower := strings.ToLower(name); lower {
		case "date":
			l.date = i
		case "time":
			l.time = i
		case "c-ip":
			l.addr = i
		case "c-dns":
			l.dns = i
		case "cs-method":
			l.method = i
		case "cs-uri-stem":
			l.stem = i
		case "cs-uri-query":
			l.query = i
		case "cs-uri":
			l.uri = i
		case "cs-version":
			l.proto = i
		case "cs-username":
			l.user = i
		case "sc-status":
			l.status = i
		case "cs(user-agent)":
			l.ua = i
		case "cs(referer)", "cs(referrer)":
			l.ref = i
		case "x-forwarded-for", "cs(x-forwarded-for)":
			// IIS's custom field (named as its administrator chose;
			// this name is the usual one), CloudFront's field (the
			// header its viewer sent: see edge), or the header.
			l.xff = i
			l.headers = append(l.headers, w3cHeader{"X-Forwarded-For", i})
		default:
			if strings.HasPrefix(lower, "x-edge-") {
				l.edge = true
			}
			if h, ok := strings.CutPrefix(name, "cs("); ok && strings.HasSuffix(h, ")") && isToken(h[:len(h)-1]) {
				l.headers = append(l.headers, w3cHeader{h[:len(h)-1], i})
			}
		}
	}
	switch {
	case l.time < 0:
		l.problem = "has no time field"
	case l.addr < 0 && l.dns < 0 && l.xff < 0:
		l.problem = "has no client address field (c-ip, c-dns or X-Forwarded-For)"
	case l.method < 0:
		l.problem = "has no method field (cs-method)"
	case l.stem < 0 && l.uri < 0:
		l.problem = "has no request path field (cs-uri-stem or cs-uri)"
	}
	return l
}

// w3cState is what a Reader knows of the W3C directives read so far.
type w3cState struct {
	layout  *w3cLayout // nil before the first #Fields
	date    string     // of the last #Date or #Start-Date, as YYYY-MM-DD; moved on at midnight
	badDate string     // the value of the last one, when unreadable
	fields  []string   // reused for the fields of each entry
	// newest is the newest time of an entry without a date field since
	// the last #Date (zero: none yet), which rollover compares times with.
	newest time.Time
}

// Spans of rollover.
const (
	// rolloverBack is how far a time must lie before the newest for the
	// log to have passed midnight: more than half a day, where lines
	// logged out of order lie seconds or minutes back.
	rolloverBack = 12 * time.Hour
	// lateAcross is how far before the newest time a line may lie on the
	// day before it: a slow request's line, logged when it ends, after
	// the rollover.
	lateAcross = time.Hour
)

// rollover returns t, the time of an entry without a date field, on the
// day that puts it where the log is: the day of s.date, or the next when
// t lies more than rolloverBack before the newest time since the #Date
// (the log ran past midnight without a new #Date; s.date moves on with
// it), or the day before when t on that day lies within lateAcross before
// the newest (a line logged late, after midnight). The first entry after
// a #Date is on its day. A log without a date field that falls silent for
// half a day or more cannot tell a new day from a step back without a new
// #Date directive, which IIS writes at the start of each log file.
func (s *w3cState) rollover(t time.Time) time.Time {
	const day = 24 * time.Hour
	switch {
	case s.newest.IsZero():
	case t.Before(s.newest.Add(-rolloverBack)):
		t = t.Add(day)
		s.date = t.Format("2006-01-02")
	case t.Add(-day).After(s.newest.Add(-lateAcross)):
		return t.Add(-day)
	}
	if t.After(s.newest) {
		s.newest = t
	}
	return t
}

// directive takes in the directive name: value of line n.
func (s *w3cState) directive(name, value string, n int64) {
	switch name {
	case "Fields":
		s.layout = newW3CLayout(value, n)
	case "Date", "Start-Date":
		day, _, _ := strings.Cut(value, " ")
		s.date, s.badDate, s.newest = "", "", time.Time{}
		for _, layout := range []string{"2006-01-02", "02-Jan-2006"} {
			if t, err := time.Parse(layout, day); err == nil {
				s.date = t.Format("2006-01-02")
				return
			}
		}
		s.badDate = value
	}
}

// parse parses one W3C entry under the current layout. The strings of e
// are substrings of line, or new.
func (s *w3cState) parse(line string, tc *timeCache, e *Entry) error {
	l := s.layout
	if l == nil {
		return errors.New("no #Fields directive before the line")
	}
	if l.problem != "" {
		return fmt.Errorf("the #Fields directive of line %d %s", l.line, l.problem)
	}
	f, err := splitW3C(line, s.fields[:0])
	s.fields = f
	if err != nil {
		return err
	}
	if len(f) != l.n {
		return fmt.Errorf("%s; the #Fields directive of line %d lists %d", plural.Count(len(f), "field"), l.line, l.n)
	}
	get := func(i int) string {
		if i < 0 || f[i] == "-" || f[i] == "" {
			return ""
		}
		return f[i]
	}
	*e = Entry{}
	day := s.date
	if l.date >= 0 {
		day = f[l.date]
	} else if day == "" {
		if s.badDate != "" {
			return errors.New("bad #Date directive " + strconv.Quote(clip(s.badDate)))
		}
		return errors.New("no date field, and no #Date directive before the line")
	}
	stamp := day + " " + f[l.time]
	t, err := tc.parse("2006-01-02 15:04:05", stamp)
	if err != nil {
		if t, err = tc.parse("2006-01-02 15:04", stamp); err != nil {
			return errors.New("bad date or time " + strconv.Quote(clip(stamp)))
		}
	}
	if l.date < 0 {
		t = s.rollover(t)
	}
	e.Time = t
	for _, i := range []int{l.addr, l.dns} {
		if e.Addr = get(i); e.Addr != "" {
			break
		}
	}
	if e.Addr == "" && get(l.xff) != "" {
		// No peer logged: the list's last entry, as for a Common Log
		// Format line that starts with the list (see parseCLF).
		e.Addr, _ = lastForwarded(forwardedText(f[l.xff]))
	}
	if e.Addr == "" {
		name := "c-ip"
		if l.addr < 0 {
			name = "c-dns"
			if l.dns < 0 {
				name = "X-Forwarded-For"
			}
		}
		return errors.New("no client address (" + name + " is -)")
	}
	if e.Method = f[l.method]; !isToken(e.Method) || e.Method == "-" {
		return errors.New("bad cs-method " + strconv.Quote(clip(e.Method)))
	}
	if l.stem >= 0 {
		if err := setTarget(f[l.stem], e); err != nil {
			return err
		}
		if q := get(l.query); q != "" {
			e.Query = q
		}
	} else if err := setTarget(f[l.uri], e); err != nil {
		return err
	}
	e.Proto, e.User, e.Referer = get(l.proto), spaces(get(l.user)), get(l.ref)
	if code := get(l.status); code != "" {
		n, err := strconv.Atoi(code)
		if err != nil || !allDigits(code) {
			return errors.New("bad sc-status " + strconv.Quote(clip(code)))
		}
		if n >= 100 && n <= 999 {
			e.Status = n // not 000, a request without a response
		}
	}
	if ua := get(l.ua); ua != "" {
		e.UserAgent = agentText(ua)
	}
	for _, h := range l.headers {
		v := get(h.i)
		if v == "" || h.i == l.xff && l.edge && get(l.addr) != "" {
			continue
		}
		switch {
		case h.i == l.xff, strings.EqualFold(h.name, "Forwarded"):
			v = forwardedText(v)
		case strings.EqualFold(h.name, "Cookie"):
			v = cookieText(v)
		}
		e.Headers = append(e.Headers, Header{Name: h.name, Value: v})
	}
	if ip := get(l.addr); l.edge && ip != "" {
		// The header as the CDN forwards it to the origin, which a
		// middleware there reads: the viewer's own list, if any, and
		// c-ip, the address the viewer connected from.
		v := ip
		if xff := get(l.xff); xff != "" {
			v = forwardedText(xff) + ", " + ip
		}
		e.Headers = append(e.Headers, Header{Name: "X-Forwarded-For", Value: v})
	}
	return nil
}

// forwardedText is an X-Forwarded-For or Forwarded field as sent: IIS
// writes its spaces as '+', which no address holds.
func forwardedText(v string) string {
	return spaces(v)
}

// spaces is a field with IIS's '+' for a space undone. For the user name
// (cs-username) this keys "JOE BLOGGS" as the middleware does; a '+' of
// the name itself, which IIS writes as it is, reads as a space too (the
// log cannot tell them apart), which keeps one key per logged name.
func spaces(v string) string {
	return strings.ReplaceAll(v, "+", " ")
}

// cookieText is a Cookie field as sent: IIS writes the space after each
// ';' as '+'. Only those are undone: a cookie's value holds no space
// (RFC 6265) and may hold a '+' (base64).
func cookieText(v string) string {
	if !strings.Contains(v, ";+") {
		return v
	}
	b := []byte(v)
	after := false // b[i] follows a ';' and '+'s only
	for i, c := range b {
		switch {
		case c == ';':
			after = true
		case c == '+' && after:
			b[i] = ' '
		default:
			after = false
		}
	}
	return string(b)
}

// agentText is a User-Agent field as sent: IIS writes its spaces as '+',
// CloudFront and others URL-encode it ("%20"). A field that is no valid
// URL encoding is kept as it is, but for the '+'.
func agentText(v string) string {
	v = strings.ReplaceAll(v, "+", " ")
	if strings.IndexByte(v, '%') >= 0 {
		if u, err := url.PathUnescape(v); err == nil {
			v = u
		}
	}
	return v
}

// splitW3C appends the fields of a W3C entry to dst: separated by tabs
// when line has one, else by runs of spaces; a quoted field ("...", with
// "" for a quote) may hold either.
func splitW3C(line string, dst []string) ([]string, error) {
	sep := byte(' ')
	if strings.IndexByte(line, '\t') >= 0 {
		sep = '\t'
	}
	i := 0
	for {
		if sep == ' ' {
			for i < len(line) && line[i] == ' ' {
				i++
			}
			if i == len(line) {
				return dst, nil
			}
		}
		if i < len(line) && line[i] == '"' {
			v, n, err := w3cQuoted(line[i:])
			if err != nil {
				return dst, err
			}
			dst = append(dst, v)
			if i += n; i < len(line) && line[i] != sep {
				return dst, errors.New("text after a quoted field")
			}
		} else {
			j := strings.IndexByte(line[i:], sep)
			if j < 0 {
				return append(dst, line[i:]), nil
			}
			dst = append(dst, line[i:i+j])
			i += j
		}
		if sep == '\t' {
			if i == len(line) {
				return dst, nil
			}
			i++
		}
	}
}

// w3cQuoted returns the quoted field that starts s, unquoted, and its
// length in s.
func w3cQuoted(s string) (string, int, error) {
	doubled := false
	for i := 1; i < len(s); i++ {
		if s[i] != '"' {
			continue
		}
		if i+1 < len(s) && s[i+1] == '"' {
			doubled = true
			i++
			continue
		}
		v := s[1:i]
		if doubled {
			v = strings.ReplaceAll(v, `""`, `"`)
		}
		return v, i + 1, nil
	}
	return "", 0, errors.New("field has no closing quote")
}
