package logparse

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/quote"
)

// JSONFields names the fields of JSON-lines logs. An empty name tries the
// usual names, in order (see DefaultJSONFields). A dotted name reaches into
// nested objects: "request.method".
type JSONFields struct {
	Time   string
	Addr   string
	Method string
	// Path is the field of the request target ("/login?next=/"), or of
	// the request line ("POST /login HTTP/1.1"), which gives the method
	// too unless the method's field does.
	Path string
	User string
	// Status is the field of the response status, which count: failed
	// and succeeded go by; a value that is no status code (100 to 999)
	// leaves it unknown.
	Status string
	// Headers maps a request header to the field holding its value, for
	// policies keyed by a header: {"X-User-ID": "user_id"}.
	Headers map[string]string
}

// DefaultJSONFields are the names tried for fields left empty, in order:
// nginx's variables and the usual names first, then Caddy's (its request's
// fields in a "request" object, each header a list) and Traefik's (its
// capitalised names; request headers, when kept, as "request_<Name>").
// A dotted name reaches into nested objects.
var DefaultJSONFields = struct{ Time, Addr, Method, Path, User, Status, Request, UserAgent, Referer, ForwardedFor []string }{
	// nginx's variables too: $time_iso8601, $time_local, $msec. Traefik's
	// StartUTC first: its "time" is when the line was written, as the
	// request ended.
	Time:   []string{"StartUTC", "time", "ts", "timestamp", "@timestamp", "start_time", "time_iso8601", "time_local", "msec"},
	Addr:   []string{"remote_addr", "remote_ip", "client_ip", "ip", "addr", "request.remote_ip", "request.remote_addr", "ClientHost"},
	Method: []string{"method", "request_method", "verb", "request.method", "RequestMethod"},
	Path:   []string{"path", "uri", "request_uri", "url", "request.uri", "RequestPath"},
	User:   []string{"user", "user_id", "remote_user", "ClientUsername"},
	Status: []string{"status", "status_code", "response_status", "response_code", "DownstreamStatus"},
	// The request line ("POST /login HTTP/1.1", nginx's $request), read
	// for the method, path and protocol when no path field is present.
	Request: []string{"request"},
	// The User-Agent and Referer headers, unless JSONFields.Headers maps
	// them to a field of its choosing.
	UserAgent: []string{"user_agent", "http_user_agent", "useragent", "request.headers.User-Agent", "request_User-Agent"},
	Referer:   []string{"referer", "http_referer", "referrer", "http_referrer", "request.headers.Referer", "request_Referer"},
	// The X-Forwarded-For header, unless JSONFields.Headers maps it: the
	// configuration's trusted proxies choose the client from it.
	ForwardedFor: []string{"http_x_forwarded_for", "x_forwarded_for", "request.headers.X-Forwarded-For", "request_X-Forwarded-For"},
}

// parseJSON parses one JSON object per line.
func parseJSON(line string, f *JSONFields, tc *timeCache, e *Entry) error {
	var m missing
	return parseJSONLine(line, f, tc, e, &m)
}

// missing tells which fields a JSON line lacks that its entry has a
// default for.
type missing struct {
	path   bool // no request target under any field looked for: the path /
	method bool // no method, in a field or a request line: GET
}

// parseJSONLine is parseJSON that also reports, in m, the fields the line
// lacks that its entry has a default for.
func parseJSONLine(line string, f *JSONFields, tc *timeCache, e *Entry, m *missing) error {
	var obj map[string]any
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber() // Unix nanoseconds do not fit a float64
	if err := dec.Decode(&obj); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			// JSON, but a number (a Common Log Format line), an array...
			return errors.New("not a JSON object (" + article(ute.Value) + ")")
		}
		return errors.New("invalid JSON: " + strings.TrimPrefix(err.Error(), "json: "))
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("invalid JSON: data after the object")
	}
	*e = Entry{}
	tv, tname := lookup(obj, f.Time, DefaultJSONFields.Time)
	if tv == nil {
		return errors.New("no time field (" + names(f.Time, DefaultJSONFields.Time, "--json-time") + ")")
	}
	t, err := jsonTime(tv, tc)
	if err != nil {
		return errors.New("field " + quote.IfNeeded(tname) + ": " + err.Error())
	}
	e.Time = t
	if v, _ := lookup(obj, f.Addr, DefaultJSONFields.Addr); v != nil {
		e.Addr = scalar(v)
	}
	if e.Addr == "" {
		return errors.New("no client address field (" + names(f.Addr, DefaultJSONFields.Addr, "--json-ip") + ")")
	}
	list := ""
	if strings.IndexByte(e.Addr, ',') >= 0 {
		// An X-Forwarded-For list logged as the client, read as a
		// Common Log Format line's first field is (see parseCLF): its
		// last entry the address, the list the header, unless a field
		// gives the header.
		last, err := lastForwarded(e.Addr)
		if err != nil {
			return err
		}
		list, e.Addr = e.Addr, last
	}
	method := ""
	if v, _ := lookup(obj, f.Method, DefaultJSONFields.Method); v != nil {
		method = scalar(v)
	}
	target, found := "/", false
	if v, _ := lookup(obj, f.Path, DefaultJSONFields.Path); v != nil {
		target, found = scalar(v), true
	} else if f.Path == "" {
		// Text only: Caddy's "request" is an object of fields.
		if v, _ := lookup(obj, "", DefaultJSONFields.Request); v != nil {
			if line, ok := v.(string); ok {
				target, found = line, true
			}
		}
	}
	m.path = !found
	if word, _, ok := strings.Cut(target, " "); found && ok && isToken(word) {
		// A request line ("POST /login HTTP/1.1"): its method, unless a
		// field of its own gives one.
		if err := parseRequestLine(target, e); err != nil {
			return err
		}
		if method != "" {
			e.Method = method
		}
	} else {
		if e.Method = method; e.Method == "" {
			e.Method, m.method = "GET", true
		}
		if err := setTarget(target, e); err != nil {
			return err
		}
	}
	if !isToken(e.Method) {
		return errors.New("bad method " + strconv.Quote(clip(e.Method)))
	}
	if v, _ := lookup(obj, f.User, DefaultJSONFields.User); v != nil {
		e.User = optional(v)
	}
	if f.Status != "" {
		if v, _ := lookup(obj, f.Status, nil); v != nil {
			e.Status = statusCode(v)
		}
	} else {
		// The first default field that holds a code: "status" may be an
		// application's own word ("ok") beside "status_code".
		for _, name := range DefaultJSONFields.Status {
			if v := field(obj, name); v != nil {
				if e.Status = statusCode(v); e.Status != 0 {
					break
				}
			}
		}
	}
	if !mapped(f.Headers, "User-Agent") {
		if v, _ := lookup(obj, "", DefaultJSONFields.UserAgent); v != nil {
			e.UserAgent = optional(v)
		}
	}
	if !mapped(f.Headers, "Referer") {
		if v, _ := lookup(obj, "", DefaultJSONFields.Referer); v != nil {
			e.Referer = optional(v)
		}
	}
	if !mapped(f.Headers, "X-Forwarded-For") {
		if v, _ := lookup(obj, "", DefaultJSONFields.ForwardedFor); v != nil {
			if s := optional(v); s != "" {
				e.Headers = append(e.Headers, Header{Name: "X-Forwarded-For", Value: s})
			}
		}
	}
	for name, field := range f.Headers {
		if v, _ := lookup(obj, field, nil); v != nil {
			if s := optional(v); s != "" {
				e.Headers = append(e.Headers, Header{Name: name, Value: s})
			}
		}
	}
	if list != "" && !slices.ContainsFunc(e.Headers, func(h Header) bool { return strings.EqualFold(h.Name, "X-Forwarded-For") }) {
		e.Headers = append(e.Headers, Header{Name: "X-Forwarded-For", Value: list})
	}
	return nil
}

// article puts "a" or "an" before a JSON type's name ("number", "array").
func article(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

// mapped reports whether headers maps header (in any case) to a field.
func mapped(headers map[string]string, header string) bool {
	for name := range headers {
		if strings.EqualFold(name, header) {
			return true
		}
	}
	return false
}

// statusCode returns the HTTP status v holds (a number or digits, 100 to
// 999), or 0.
func statusCode(v any) int {
	if code, err := strconv.Atoi(scalar(v)); err == nil && code >= 100 && code <= 999 {
		return code
	}
	return 0
}

// names returns the field name set, or when none was set the defaults
// looked for and the replay flag that names another field.
func names(set string, defaults []string, flag string) string {
	if set != "" {
		return quote.IfNeeded(set) // a flag's value: a newline would split the sample's line
	}
	return strings.Join(defaults, ", ") + "; " + flag + " FIELD names another"
}

// lookup returns the value of the field named name (dotted for nested
// objects), or of the first of defaults present when name is empty.
func lookup(obj map[string]any, name string, defaults []string) (any, string) {
	if name == "" {
		for _, d := range defaults {
			if v := field(obj, d); v != nil {
				return v, d
			}
		}
		return nil, ""
	}
	return field(obj, name), name
}

// field returns the value of the field named name in obj: the top-level
// field of that name, else, for a dotted name, the nested field it names;
// nil when there is none.
func field(obj map[string]any, name string) any {
	if v, ok := obj[name]; ok {
		return v
	}
	if !strings.Contains(name, ".") {
		return nil
	}
	cur := any(obj)
	for _, part := range strings.Split(name, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[part]
	}
	return cur
}

// optional formats the value of a field that may be absent (the user, a
// request header): "" for "-", which access logs write for an absent
// value, in JSON lines as in the Common Log Format; else as scalar.
// A list of scalars (Caddy logs each request header as one) is its
// values joined as HTTP joins the lines of a field, with ", ".
func optional(v any) string {
	if list, ok := v.([]any); ok {
		var vals []string
		for _, e := range list {
			if s := optional(e); s != "" {
				vals = append(vals, s)
			}
		}
		return strings.Join(vals, ", ")
	}
	if s := scalar(v); s != "-" {
		return s
	}
	return ""
}

// scalar formats a JSON scalar as text; "" for objects, arrays and null.
func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// timeLayouts are the layouts of text timestamps, tried in order after
// the last one that matched: RFC 3339, with a space for the T, with a zone
// offset without colon, without a zone (taken as UTC), Caddy's "wall"
// (2006/01/02 15:04:05, UTC as Caddy writes it) and the Common Log
// Format's. Parsing takes a fraction of a second after the seconds, with a
// point or a comma, without a layout saying so.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02T15:04:05Z0700",
	"2006-01-02 15:04:05Z0700",
	"2006-01-02T15:04:05",
	"2006-01-02 15:04:05",
	"2006/01/02 15:04:05",
	clfLayout,
}

// jsonTime reads a timestamp: text in one of timeLayouts (or in brackets,
// as the Common Log Format writes it), or a Unix time in seconds,
// milliseconds, microseconds or nanoseconds (told apart by magnitude), as
// a number or as text.
func jsonTime(v any, tc *timeCache) (time.Time, error) {
	switch v := v.(type) {
	case string:
		if v == tc.text && v != "" {
			return tc.t, nil
		}
		text := strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
		for i := range timeLayouts {
			j := (tc.layout + i) % len(timeLayouts)
			if t, err := parseTime(timeLayouts[j], text); err == nil {
				tc.text, tc.t, tc.layout = strings.Clone(v), t, j
				return t, nil
			}
		}
		if t, err := unixNumber(json.Number(v)); err == nil {
			return t, nil
		}
		return time.Time{}, errors.New("unknown time format " + strconv.Quote(clip(v)))
	case json.Number:
		return unixNumber(v)
	}
	return time.Time{}, errors.New("time is neither text nor a number")
}

// unixNumber reads a Unix time in seconds, milliseconds, microseconds or
// nanoseconds (told apart by the magnitude of the whole part), exactly to
// the nanosecond: decimal fractions and exponents too (a float64 made
// 1710072002.123 into .122999906 and dropped a millisecond time's fraction).
func unixNumber(n json.Number) (time.Time, error) {
	if whole, frac, ok := decimal(string(n)); ok {
		if whole == 0 && strings.Trim(frac, "0") == "" {
			return time.Time{}, errors.New("time out of range")
		}
		// digits of the fraction that the unit keeps: its nanoseconds
		var unit int64
		var keep int
		switch {
		case whole < 1e11: // seconds (until the year 5138)
			unit, keep = 1e9, 9
		case whole < 1e14:
			unit, keep = 1e6, 6
		case whole < 1e17:
			unit, keep = 1e3, 3
		default:
			unit, keep = 1, 0
		}
		frac = (frac + "000000000")[:keep]
		var nsec int64
		for i := 0; i < len(frac); i++ {
			nsec = nsec*10 + int64(frac[i]-'0')
		}
		perSec := 1e9 / unit
		return time.Unix(whole/perSec, whole%perSec*unit+nsec).UTC(), nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		return time.Time{}, errors.New("not a number")
	}
	return unixTime(f)
}

// decimal splits a non-negative decimal number, with an optional plus
// sign, fraction and exponent ("1710072002.123", "+1.710072002123e9",
// ".5"), into its whole part and the digits of its fraction, exactly. It
// reports false for anything else, and for a whole part beyond int64.
func decimal(s string) (whole int64, frac string, ok bool) {
	s = strings.TrimPrefix(s, "+")
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e < -30 || e > 30 {
			return 0, "", false
		}
		mant, exp = s[:i], e
	}
	intPart, fracPart, _ := strings.Cut(mant, ".")
	if intPart+fracPart == "" || !allDigits(intPart) || !allDigits(fracPart) {
		return 0, "", false
	}
	digits, point := intPart+fracPart, len(intPart)+exp
	switch {
	case point <= 0:
		return 0, strings.Repeat("0", -point) + digits, true
	case point >= len(digits):
		digits += strings.Repeat("0", point-len(digits))
		point = len(digits)
	}
	w, err := strconv.ParseInt(digits[:point], 10, 64)
	if err != nil {
		return 0, "", false
	}
	return w, digits[point:], true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func unixTime(f float64) (time.Time, error) {
	if math.IsNaN(f) || f <= 0 || f > 9e18 {
		return time.Time{}, errors.New("time out of range")
	}
	switch {
	case f < 1e11: // seconds (until the year 5138)
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
	case f < 1e14:
		return time.UnixMilli(int64(f)).UTC(), nil
	case f < 1e17:
		return time.UnixMicro(int64(f)).UTC(), nil
	}
	return time.Unix(0, int64(f)).UTC(), nil
}
