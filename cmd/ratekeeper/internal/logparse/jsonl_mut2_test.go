package logparse

import (
	"strings"
	"testing"
	"time"
)

// parseJSONText parses line as a JSON-lines Reader does, with fields f
// and a fresh time cache.
func parseJSONText(line string, f JSONFields) (Entry, error) {
	var e Entry
	var tc timeCache
	err := parseJSON(line, &f, &tc, &e)
	return e, err
}

// TestJSONUnixTimeEdges: Unix times in numbers and in text, at the edges
// of each unit's range (1e11 seconds is read as milliseconds, 1e14
// milliseconds as microseconds, 1e17 microseconds as nanoseconds), with
// exponents up to ±30 read exactly, the nanosecond kept to the last digit,
// and text that only a float reads ("+1710072002.5", hex), through the
// float's own ranges; and the times refused, with their reasons.
func TestJSONUnixTimeEdges(t *testing.T) {
	epoch := time.Unix(0, 0).UTC()
	at := time.Date(1973, 3, 3, 9, 46, 40, 0, time.UTC) // 1e11 ms, 1e14 µs, 1e17 ns
	exact := time.Date(2024, 3, 10, 12, 0, 2, 123456789, time.UTC)
	for _, tc := range []struct {
		field string
		want  time.Time
	}{
		{`100000000000`, at},
		{`99999999999`, time.Date(5138, 11, 16, 9, 46, 39, 0, time.UTC)}, // out of the reader's range, but read as seconds
		{`100000000000000`, at},
		{`100000000000000000`, at},
		{`1710072002123456789.5`, exact},
		{`1e-1`, epoch.Add(100 * time.Millisecond)},
		{`15e-9`, epoch.Add(15)}, // a float64 reads 14 ns
		{`"000000015e-9"`, epoch.Add(15)},
		{`1.71e9`, time.Unix(1710000000, 0).UTC()},
		{`5000000000000000001`, time.Unix(0, 5000000000000000001).UTC()},
		{`0.000000000000000000001710072002123456789e30`, exact},
		{`1710072002123456789000000000000000000000e-30`, exact},
		{`0.00000000000000000000001710072002e32`, time.Unix(1710072002, 0).UTC()},
		{`"+1710072002.5"`, time.Unix(1710072002, 5e8).UTC()},
		{`"+1e11"`, at},
		{`"+1e14"`, at},
		{`"+1e17"`, at},
		{`"+1710072002123"`, time.UnixMilli(1710072002123).UTC()},
		{`"+1710072002123456"`, time.UnixMicro(1710072002123456).UTC()},
		{`"+1"`, epoch.Add(time.Second)},
		{`"+9e18"`, time.Unix(0, 9e18).UTC()},
		{`"0x1p30"`, time.Unix(1<<30, 0).UTC()},
	} {
		e, err := parseJSONText(`{"time": `+tc.field+`, "ip": "192.0.2.1"}`, JSONFields{})
		if err != nil || !e.Time.Equal(tc.want) {
			t.Errorf("time %s: %v, %v; want %v", tc.field, e.Time, err, tc.want)
		}
	}
	for _, tc := range []struct{ field, reason string }{
		{`0`, "field time: time out of range"},
		{`0.000`, "field time: time out of range"},
		{`-5.5`, "field time: time out of range"},
		{`1e400`, "field time: not a number"},
		{`1e-400`, "field time: time out of range"},
		{`99999999999999999999`, "field time: time out of range"},
		{`"+0"`, `field time: unknown time format "+0"`},
		{`"NaN"`, `field time: unknown time format "NaN"`},
		{`"1e"`, `field time: unknown time format "1e"`},
		{`"-5.5"`, `field time: unknown time format "-5.5"`},
		{`"nope"`, `field time: unknown time format "nope"`},
		{`true`, "field time: time is neither text nor a number"},
	} {
		e, err := parseJSONText(`{"time": `+tc.field+`, "ip": "192.0.2.1"}`, JSONFields{})
		if err == nil || err.Error() != tc.reason {
			t.Errorf("time %s: %v at %v, want %q", tc.field, err, e.Time, tc.reason)
		}
	}
}

// TestJSONTextLayouts: the layouts with a space for the T and a zone
// offset, with and without its colon.
func TestJSONTextLayouts(t *testing.T) {
	want := time.Date(2024, 3, 10, 11, 0, 0, 0, time.UTC)
	for _, s := range []string{"2024-03-10 12:00:00+01:00", "2024-03-10 12:00:00+0100"} {
		if e, err := parseJSONText(`{"time": "`+s+`", "ip": "192.0.2.1"}`, JSONFields{}); err != nil || !e.Time.Equal(want) {
			t.Errorf("%s: %v, %v; want %v", s, e.Time, err, want)
		}
	}
}

// TestJSONLineFields: what each field of a JSON line gives, and the
// reason of each line refused.
func TestJSONLineFields(t *testing.T) {
	const ts = `"time": "2024-03-10T12:00:00Z"`
	for _, tc := range []struct {
		line   string
		fields JSONFields
		check  func(e Entry) bool
	}{
		{`{` + ts + `, "remote_addr": null, "ip": "192.0.2.3"}`, JSONFields{}, func(e Entry) bool { return e.Addr == "192.0.2.3" }},
		{`{` + ts + `, "ip": "192.0.2.3", "path": "/a b"}`, JSONFields{}, func(e Entry) bool { return e.Path == "/a b" && e.Method == "GET" }},
		{`{` + ts + `, "ip": "192.0.2.3", "status": 200, "status_code": 404}`, JSONFields{}, func(e Entry) bool { return e.Status == 200 }},
		{`{` + ts + `, "ip": "192.0.2.3", "status": "ok", "status_code": 404}`, JSONFields{}, func(e Entry) bool { return e.Status == 404 }},
		{`{` + ts + `, "ip": "192.0.2.3", "status": 100}`, JSONFields{}, func(e Entry) bool { return e.Status == 100 }},
		{`{` + ts + `, "ip": "192.0.2.3", "status": 999}`, JSONFields{}, func(e Entry) bool { return e.Status == 999 }},
		{`{` + ts + `, "ip": "192.0.2.3", "status": 99}`, JSONFields{}, func(e Entry) bool { return e.Status == 0 }},
		{`{` + ts + `, "ip": "192.0.2.3", "status": 1000}`, JSONFields{}, func(e Entry) bool { return e.Status == 0 }},
		{`{` + ts + `, "ip": "192.0.2.3", "user": true}`, JSONFields{}, func(e Entry) bool { return e.User == "true" }},
	} {
		e, err := parseJSONText(tc.line, tc.fields)
		if err != nil || !tc.check(e) {
			t.Errorf("%s: %+v, %v", tc.line, e, err)
		}
	}
	for _, tc := range []struct {
		line   string
		fields JSONFields
		reason string
	}{
		{`{` + ts + `, "ip": "192.0.2.3"`, JSONFields{}, "invalid JSON: unexpected EOF"},
		{`{` + ts + `, "ip": "192.0.2.3"} x`, JSONFields{}, "invalid JSON: data after the object"},
		// A field none of the defaults names: the reason says which flag
		// names it (it said only the defaults, and a new user had to find
		// the flag in --help); a name the flag gave is not hinted at.
		{`{` + ts + `}`, JSONFields{}, "no client address field (" + strings.Join(DefaultJSONFields.Addr, ", ") + "; --json-ip FIELD names another)"},
		{`{` + ts + `, "": "192.0.2.3"}`, JSONFields{}, "no client address field (" + strings.Join(DefaultJSONFields.Addr, ", ") + "; --json-ip FIELD names another)"},
		{`{` + ts + `, "ip": "192.0.2.3"}`, JSONFields{Addr: "peer.ip"}, "no client address field (peer.ip)"},
		{`{"when": "2024-03-10T12:00:00Z", "ip": "192.0.2.3"}`, JSONFields{}, "no time field (" + strings.Join(DefaultJSONFields.Time, ", ") + "; --json-time FIELD names another)"},
		{`{"when": "2024-03-10T12:00:00Z", "ip": "192.0.2.3"}`, JSONFields{Time: "at"}, "no time field (at)"},
		{`{` + ts + `, "ip": "192.0.2.3", "path": "login"}`, JSONFields{}, `bad request target "login"`},
		{`{` + ts + `, "ip": "192.0.2.3", "request": "GET x HTTP/1.1"}`, JSONFields{}, `bad request target "x"`},
		{`{` + ts + `, "ip": "192.0.2.3", "path": "/a", "method": "G@T"}`, JSONFields{}, `bad method "G@T"`},
	} {
		e, err := parseJSONText(tc.line, tc.fields)
		if err == nil || err.Error() != tc.reason {
			t.Errorf("%s: %v (entry %+v), want %q", tc.line, err, e, tc.reason)
		}
	}
}

// TestJSONMalformedLeavesNothing: a JSON line refused after some of its
// fields were read leaves none of them in the next line's entry.
func TestJSONMalformedLeavesNothing(t *testing.T) {
	log := `{"time": "2024-03-10T12:00:00Z", "ip": "192.0.2.1", "request": "POST /a?q=1 HTTP/1.1", "method": "G@T"}
{"time": "2024-03-10T12:00:01Z", "ip": "192.0.2.2"}
`
	r, err := NewReader(strings.NewReader(log), "j.log", Options{Format: JSON})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, r)
	want := Entry{Time: time.Date(2024, 3, 10, 12, 0, 1, 0, time.UTC), Addr: "192.0.2.2", Method: "GET", Path: "/"}
	if len(got) != 1 || got[0].Proto != "" || got[0].Method != want.Method || got[0].Path != want.Path || got[0].Query != "" || !got[0].Time.Equal(want.Time) || got[0].Addr != want.Addr {
		t.Errorf("entries %+v, want %+v", got, want)
	}
	if s := r.Samples(); len(s) != 1 || s[0].Reason != `bad method "G@T"` {
		t.Errorf("malformed %v, want line 1's bad method", s)
	}
}
