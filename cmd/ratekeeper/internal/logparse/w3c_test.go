package logparse

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// readW3C reads log in the format f and returns its entries and
// malformed lines.
func readW3C(t *testing.T, log string, f Format) ([]Entry, *Reader) {
	t.Helper()
	r, err := NewReader(strings.NewReader(log), "u_ex240310.log", Options{Format: f})
	if err != nil {
		t.Fatal(err)
	}
	return readAll(t, r), r
}

// TestW3CIIS reads an IIS log (W3C Extended Log File Format, IIS's
// default fields) whose #Fields directive changes midway, the second
// layout with the X-Forwarded-For custom field: every line was malformed
// ("no [time] field", the directives too).
func TestW3CIIS(t *testing.T) {
	const log = `#Software: Microsoft Internet Information Services 10.0
#Version: 1.0
#Date: 2024-03-10 12:00:00
#Fields: date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-username c-ip cs(User-Agent) cs(Referer) sc-status sc-substatus sc-win32-status time-taken
2024-03-10 12:00:00 10.0.0.1 GET /items/7 x=1 443 - 192.0.2.1 Mozilla/5.0+(Windows+NT+10.0;+Win64;+x64) https://example.com/ 200 0 0 15
2024-03-10 12:00:01 10.0.0.1 POST /login - 443 ann 2001:db8::1 curl/8.5 - 401 1 0 3
#Software: Microsoft Internet Information Services 10.0
#Version: 1.0
#Date: 2024-03-10 12:00:02
#Fields: date time c-ip cs-method cs-uri-stem sc-status X-Forwarded-For cs-version
2024-03-10 12:00:02 10.0.0.9 GET / 200 203.0.113.7,+10.0.0.9 HTTP/1.1
`
	at := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
	want := []Entry{
		{Time: at, Addr: "192.0.2.1", Method: "GET", Path: "/items/7", Query: "x=1", Status: 200, Referer: "https://example.com/", UserAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64)"},
		{Time: at.Add(time.Second), Addr: "2001:db8::1", User: "ann", Method: "POST", Path: "/login", Status: 401, UserAgent: "curl/8.5"},
		{Time: at.Add(2 * time.Second), Addr: "10.0.0.9", Method: "GET", Path: "/", Proto: "HTTP/1.1", Status: 200, Headers: []Header{{Name: "X-Forwarded-For", Value: "203.0.113.7, 10.0.0.9"}}},
	}
	for _, f := range []Format{Auto, W3C} {
		got, r := readW3C(t, log, f)
		if !reflect.DeepEqual(got, want) || r.MalformedCount() != 0 {
			t.Errorf("%s: entries\n%+v\nwant\n%+v\n(malformed %v)", f, got, want, r.Samples())
		}
		if r.Lines() != 11 {
			t.Errorf("%s: %d lines, want 11", f, r.Lines())
		}
	}
}

// TestW3CGeneric reads the W3C format as other servers and CDNs write it:
// the draft's own example (time alone, the date from #Date in its
// DD-Mon-YYYY form, cs-uri), quoted strings with "" for a quote, a
// fraction of a second, and tab-separated fields as CloudFront writes
// them, with empty fields, status 000 (no response), a URL-encoded user
// agent, the x-forwarded-for field (the viewer's header, which CloudFront
// forwards with c-ip appended) and other request headers.
func TestW3CGeneric(t *testing.T) {
	const log = "#Version: 1.0\n" +
		"#Date: 12-Jan-1996 00:00:00\n" +
		"#Fields: time c-ip cs-method cs-uri\n" +
		"00:34:23 192.0.2.1 GET /foo/bar.html?a=b\n" +
		"#Fields: date time c-dns cs-method cs-uri-stem cs(User-Agent) cs(X-Api-Key)\n" +
		"1996-01-12 12:21:16.250 client.example.com PUT /q \"Mozilla/5.0 (\"\"quoted\"\")\" \"k 1\"\n" +
		"#Version: 1.0\n" +
		"#Fields: date time x-edge-location c-ip cs-method cs(Host) cs-uri-stem sc-status cs(Referer) cs(User-Agent) cs-uri-query x-forwarded-for\n" +
		"2024-03-10\t12:00:03\tFRA56-C1\t192.0.2.5\tGET\td111.cloudfront.net\t/index.html\t000\t-\tMozilla/5.0%20(X11;%20Linux%20x86_64)\t\t198.51.100.4\n"
	want := []Entry{
		{Time: time.Date(1996, 1, 12, 0, 34, 23, 0, time.UTC), Addr: "192.0.2.1", Method: "GET", Path: "/foo/bar.html", Query: "a=b"},
		{Time: time.Date(1996, 1, 12, 12, 21, 16, 250e6, time.UTC), Addr: "client.example.com", Method: "PUT", Path: "/q", UserAgent: `Mozilla/5.0 ("quoted")`, Headers: []Header{{Name: "X-Api-Key", Value: "k 1"}}},
		{Time: time.Date(2024, 3, 10, 12, 0, 3, 0, time.UTC), Addr: "192.0.2.5", Method: "GET", Path: "/index.html", UserAgent: "Mozilla/5.0 (X11; Linux x86_64)", Headers: []Header{{Name: "Host", Value: "d111.cloudfront.net"}, {Name: "X-Forwarded-For", Value: "198.51.100.4, 192.0.2.5"}}},
	}
	got, r := readW3C(t, log, Auto)
	if !reflect.DeepEqual(got, want) || r.MalformedCount() != 0 {
		t.Errorf("entries\n%+v\nwant\n%+v\n(malformed %v)", got, want, r.Samples())
	}
}

// TestW3CMalformed: a W3C entry that does not fit its #Fields, or whose
// fields cannot be read, is a malformed line with a reason; the
// directives are not lines of the log's requests, malformed or not.
func TestW3CMalformed(t *testing.T) {
	const fields = "#Fields: date time c-ip cs-method cs-uri-stem sc-status\n"
	const good = "2024-03-10 12:00:00 192.0.2.1 GET / 200\n"
	for _, tc := range []struct {
		name, log, reason string
		f                 Format
	}{
		{"field count", fields + "2024-03-10 12:00:00 192.0.2.1 GET\n", "4 fields; the #Fields directive of line 1 lists 6", Auto},
		{"one field", fields + "2024-03-10\n", "1 field; the #Fields directive of line 1 lists 6", Auto},
		{"bad date", fields + "2024-13-10 12:00:00 192.0.2.1 GET / 200\n", `bad date or time "2024-13-10 12:00:00"`, Auto},
		{"bad time", fields + "2024-03-10 noon 192.0.2.1 GET / 200\n", `bad date or time "2024-03-10 noon"`, Auto},
		{"no address", fields + "2024-03-10 12:00:00 - GET / 200\n", "no client address (c-ip is -)", Auto},
		{"bad status", fields + "2024-03-10 12:00:00 192.0.2.1 GET / OK\n", `bad sc-status "OK"`, Auto},
		{"bad method", fields + "2024-03-10 12:00:00 192.0.2.1 G(T / 200\n", `bad cs-method "G(T"`, Auto},
		{"bad target", fields + "2024-03-10 12:00:00 192.0.2.1 GET index.html 200\n", `bad request target "index.html"`, Auto},
		{"unterminated quote", fields + "2024-03-10 12:00:00 192.0.2.1 GET \"/ 200\n", "field has no closing quote", Auto},
		{"no time field", "#Fields: date c-ip cs-method cs-uri-stem\n2024-03-10 192.0.2.1 GET /\n", "the #Fields directive of line 1 has no time field", Auto},
		{"no address field", "#Fields: date time cs-method cs-uri-stem\n2024-03-10 12:00:00 GET /\n", "the #Fields directive of line 1 has no client address field (c-ip, c-dns or X-Forwarded-For)", Auto},
		{"no path field", "#Fields: date time c-ip cs-method\n2024-03-10 12:00:00 192.0.2.1 GET\n", "the #Fields directive of line 1 has no request path field (cs-uri-stem or cs-uri)", Auto},
		{"no method field", "#Fields: date time c-ip cs-uri-stem\n2024-03-10 12:00:00 192.0.2.1 /\n", "the #Fields directive of line 1 has no method field (cs-method)", Auto},
		{"no date", "#Fields: time c-ip cs-method cs-uri-stem\n12:00:00 192.0.2.1 GET /\n", "no date field, and no #Date directive before the line", Auto},
		{"before #Fields", good, "no #Fields directive before the line", W3C},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A new #Fields directive, then an entry that fits it.
			got, r := readW3C(t, tc.log+fields+good, tc.f)
			if r.MalformedCount() != 1 || r.Samples()[0].Reason != tc.reason {
				t.Errorf("malformed %v; want one: %s", r.Samples(), tc.reason)
			}
			if len(got) != 1 || got[0].Addr != "192.0.2.1" {
				t.Errorf("entries %+v, want the last line's", got)
			}
		})
	}
}

// TestW3CDetection: the directives switch an automatically detected log
// to the W3C format; a line starting with '#' that is no W3C directive is
// malformed as before, and a Common Log Format log is read as before.
func TestW3CDetection(t *testing.T) {
	const clf = `192.0.2.1 - - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 5` + "\n"
	got, r := readW3C(t, "# a comment\n"+clf, Auto)
	if len(got) != 1 || got[0].Addr != "192.0.2.1" || r.MalformedCount() != 1 || r.Samples()[0].Reason != "no user field" {
		t.Errorf("entries %+v, malformed %v; want the CLF line read and the comment malformed as before", got, r.Samples())
	}
	// W3C entries of the layout; a JSON line beside them stays JSON.
	got, r = readW3C(t, clf+"#Fields: date time c-ip cs-method cs-uri-stem\n2024-03-10 12:00:01 192.0.2.2 GET /w\n"+`{"time": "2024-03-10T12:00:02Z", "ip": "192.0.2.3", "path": "/j"}`+"\n", Auto)
	if len(got) != 3 || got[0].Path != "/" || got[1].Path != "/w" || got[2].Path != "/j" || r.MalformedCount() != 0 {
		t.Errorf("entries %+v, malformed %v; want /, /w and /j", got, r.Samples())
	}
	if _, err := NewReader(strings.NewReader(""), "x", Options{Format: "w3c-ish"}); err == nil || !strings.Contains(err.Error(), "auto, clf, json or w3c") {
		t.Errorf("unknown format: error %v", err)
	}
}

// FuzzW3C parses a W3C entry under the layout of a #Fields directive and
// a #Date: no panic, and an entry accepted has an address, a method, a
// time and a request target.
func FuzzW3C(f *testing.F) {
	f.Add("date time s-ip cs-method cs-uri-stem cs-uri-query s-port cs-username c-ip cs(User-Agent) cs(Referer) sc-status sc-substatus sc-win32-status time-taken",
		"2024-03-10 12:00:00 10.0.0.1 GET /items/7 x=1 443 - 192.0.2.1 Mozilla/5.0+(Windows+NT+10.0) https://example.com/ 200 0 0 15")
	f.Add("time c-ip cs-method cs-uri X-Forwarded-For cs(X-Key)", `00:34:23.5 - GET /foo 203.0.113.7,+10.0.0.1 "k ""1"""`)
	f.Add("date time c-ip cs-method cs-uri-stem sc-status cs(User-Agent)", "2024-03-10\t12:00\t192.0.2.5\tGET\t/\t000\tA%20b")
	f.Fuzz(func(t *testing.T, fields, line string) {
		var s w3cState
		s.directive("Date", "2024-03-10 00:00:00", 1)
		s.directive("Fields", fields, 2)
		var e Entry
		var tc timeCache
		if s.parse(line, &tc, &e) != nil {
			return
		}
		if e.Addr == "" || !isToken(e.Method) || e.Time.IsZero() || e.Path == "" {
			t.Errorf("parse(%q) under #Fields: %s accepted %+v", line, fields, e)
		}
		if len(s.fields) != s.layout.n {
			t.Errorf("parse(%q) accepted %d fields under %d", line, len(s.fields), s.layout.n)
		}
	})
}
