package logparse

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// JSONFields names the fields of JSON-lines logs. An empty name tries the
// usual names, in order (see DefaultJSONFields). A dotted name reaches into
// nested objects: "request.method".
type JSONFields struct {
	Time   string
	Addr   string
	Method string
	Path   string
	User   string
	// Headers maps a request header to the field holding its value, for
	// policies keyed by a header: {"X-User-ID": "user_id"}.
	Headers map[string]string
}

// DefaultJSONFields are the names tried for fields left empty.
var DefaultJSONFields = struct{ Time, Addr, Method, Path, User []string }{
	Time:   []string{"time", "ts", "timestamp", "@timestamp", "start_time"},
	Addr:   []string{"remote_addr", "remote_ip", "client_ip", "ip", "addr"},
	Method: []string{"method", "request_method", "verb"},
	Path:   []string{"path", "uri", "request_uri", "url"},
	User:   []string{"user", "user_id", "remote_user"},
}

// parseJSON parses one JSON object per line.
func parseJSON(line string, f *JSONFields, tc *timeCache, e *Entry) error {
	var obj map[string]any
	if err := json.Unmarshal([]byte(line), &obj); err != nil {
		return errors.New("invalid JSON: " + strings.TrimPrefix(err.Error(), "json: "))
	}
	*e = Entry{}
	tv, tname := lookup(obj, f.Time, DefaultJSONFields.Time)
	if tv == nil {
		return errors.New("no time field (" + names(f.Time, DefaultJSONFields.Time) + ")")
	}
	t, err := jsonTime(tv, tc)
	if err != nil {
		return errors.New("field " + tname + ": " + err.Error())
	}
	e.Time = t
	if v, _ := lookup(obj, f.Addr, DefaultJSONFields.Addr); v != nil {
		e.Addr = scalar(v)
	}
	if e.Addr == "" {
		return errors.New("no client address field (" + names(f.Addr, DefaultJSONFields.Addr) + ")")
	}
	if v, _ := lookup(obj, f.Method, DefaultJSONFields.Method); v != nil {
		e.Method = scalar(v)
	}
	if e.Method == "" {
		e.Method = "GET"
	}
	if !isToken(e.Method) {
		return errors.New("bad method " + strconv.Quote(clip(e.Method)))
	}
	target := "/"
	if v, _ := lookup(obj, f.Path, DefaultJSONFields.Path); v != nil {
		target = scalar(v)
	}
	if err := setTarget(target, e); err != nil {
		return err
	}
	if v, _ := lookup(obj, f.User, DefaultJSONFields.User); v != nil {
		e.User = scalar(v)
	}
	for name, field := range f.Headers {
		if v, _ := lookup(obj, field, nil); v != nil {
			if s := scalar(v); s != "" {
				e.Headers = append(e.Headers, Header{Name: name, Value: s})
			}
		}
	}
	return nil
}

func names(set string, defaults []string) string {
	if set != "" {
		return set
	}
	return strings.Join(defaults, ", ")
}

// lookup returns the value of the field named name (dotted for nested
// objects), or of the first of defaults present when name is empty.
func lookup(obj map[string]any, name string, defaults []string) (any, string) {
	if name == "" {
		for _, d := range defaults {
			if v, ok := obj[d]; ok && v != nil {
				return v, d
			}
		}
		return nil, ""
	}
	if v, ok := obj[name]; ok {
		return v, name
	}
	cur := any(obj)
	for _, part := range strings.Split(name, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, name
		}
		cur = m[part]
	}
	return cur, name
}

// scalar formats a JSON scalar as text; "" for objects, arrays and null.
func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	return ""
}

// jsonTime reads a timestamp: RFC 3339 text, Common Log Format text, or a
// Unix time in seconds, milliseconds, microseconds or nanoseconds (told
// apart by magnitude).
func jsonTime(v any, tc *timeCache) (time.Time, error) {
	switch v := v.(type) {
	case string:
		if t, err := tc.parse(time.RFC3339Nano, v); err == nil {
			return t, nil
		}
		if t, err := time.Parse(clfLayout, strings.Trim(v, "[]")); err == nil {
			return t, nil
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return unixTime(f)
		}
		return time.Time{}, errors.New("unknown time format " + strconv.Quote(clip(v)))
	case float64:
		return unixTime(v)
	}
	return time.Time{}, errors.New("time is neither text nor a number")
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
