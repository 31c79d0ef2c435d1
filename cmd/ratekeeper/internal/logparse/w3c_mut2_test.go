package logparse

import (
	"reflect"
	"testing"
	"time"
)

// TestW3CLayoutsFieldFirst: each field the entries need may come first in
// #Fields (index 0), and each optional one too: the layout is readable and
// the field read.
func TestW3CLayoutsFieldFirst(t *testing.T) {
	at := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		fields, line string
		want         Entry
	}{
		{"c-ip date time cs-method cs-uri-stem", "192.0.2.1 2024-03-10 12:00:00 GET /a",
			Entry{Time: at, Addr: "192.0.2.1", Method: "GET", Path: "/a"}},
		{"c-dns date time cs-method cs-uri-stem", "host.example 2024-03-10 12:00:00 GET /a",
			Entry{Time: at, Addr: "host.example", Method: "GET", Path: "/a"}},
		{"x-forwarded-for date time cs-method cs-uri-stem", "203.0.113.7,+192.0.2.1 2024-03-10 12:00:00 GET /a",
			Entry{Time: at, Addr: "192.0.2.1", Method: "GET", Path: "/a", Headers: []Header{{"X-Forwarded-For", "203.0.113.7, 192.0.2.1"}}}},
		{"cs-method date time c-ip cs-uri-stem", "GET 2024-03-10 12:00:00 192.0.2.1 /a",
			Entry{Time: at, Addr: "192.0.2.1", Method: "GET", Path: "/a"}},
		{"cs-uri-stem date time c-ip cs-method", "/a 2024-03-10 12:00:00 192.0.2.1 GET",
			Entry{Time: at, Addr: "192.0.2.1", Method: "GET", Path: "/a"}},
		{"cs-uri date time c-ip cs-method sc-status cs-version", "/a?b=1 2024-03-10 12:00:00 192.0.2.1 GET 404 HTTP/1.1",
			Entry{Time: at, Addr: "192.0.2.1", Method: "GET", Path: "/a", Query: "b=1", Status: 404, Proto: "HTTP/1.1"}},
		{"cs-username date time c-ip cs-method cs-uri-stem", "JOE+BLOGGS 2024-03-10 12:00:00 192.0.2.1 GET /a",
			Entry{Time: at, Addr: "192.0.2.1", Method: "GET", Path: "/a", User: "JOE BLOGGS"}},
		// Custom header fields: cs(Name) with a token for its name alone
		// (not "cs()", "cs(a@)", "x)"); a Cookie's "; " undone, a leading
		// '+' of its value kept.
		{"date time c-ip cs-method cs-uri-stem cs(X-Id) sc-bytes x) cs() cs(a@) cs(Cookie)", "2024-03-10 12:00:00 192.0.2.1 GET /a 7 100 z y w +a=1;+b=c+d",
			Entry{Time: at, Addr: "192.0.2.1", Method: "GET", Path: "/a", Headers: []Header{{"X-Id", "7"}, {"Cookie", "+a=1; b=c+d"}}}},
		// A user agent URL-encoded from its first byte.
		{"date time c-ip cs-method cs-uri-stem cs(User-Agent)", "2024-03-10 12:00:00 192.0.2.1 GET /a %41gent",
			Entry{Time: at, Addr: "192.0.2.1", Method: "GET", Path: "/a", UserAgent: "Agent"}},
		// Tab-separated, the last field empty.
		{"date time c-ip cs-method cs-uri-stem cs-username", "2024-03-10\t12:00:00\t192.0.2.1\tGET\t/a\t",
			Entry{Time: at, Addr: "192.0.2.1", Method: "GET", Path: "/a"}},
		// An empty quoted field.
		{"date time c-ip cs-method cs-uri-stem cs(User-Agent) sc-status", "2024-03-10 12:00:00 192.0.2.1 GET /a \"\" 200",
			Entry{Time: at, Addr: "192.0.2.1", Method: "GET", Path: "/a", Status: 200}},
		// Tab-separated, the last field quoted.
		{"date time c-ip cs-method cs-uri-stem cs(User-Agent)", "2024-03-10\t12:00:00\t192.0.2.1\tGET\t/a\t\"curl 8\"",
			Entry{Time: at, Addr: "192.0.2.1", Method: "GET", Path: "/a", UserAgent: "curl 8"}},
		// Tab-separated, the first field empty.
		{"cs-username date time c-ip cs-method cs-uri-stem", "\t2024-03-10\t12:00:00\t192.0.2.1\tGET\t/a",
			Entry{Time: at, Addr: "192.0.2.1", Method: "GET", Path: "/a"}},
		{"date time c-ip cs-method cs-uri-stem sc-status", "2024-03-10 12:00:00 192.0.2.1 GET /a 100",
			Entry{Time: at, Addr: "192.0.2.1", Method: "GET", Path: "/a", Status: 100}},
		{"date time c-ip cs-method cs-uri-stem sc-status", "2024-03-10 12:00:00 192.0.2.1 GET /a 999",
			Entry{Time: at, Addr: "192.0.2.1", Method: "GET", Path: "/a", Status: 999}},
		{"date time c-ip cs-method cs-uri-stem sc-status", "2024-03-10 12:00:00 192.0.2.1 GET /a 99",
			Entry{Time: at, Addr: "192.0.2.1", Method: "GET", Path: "/a"}},
		{"date time c-ip cs-method cs-uri-stem sc-status", "2024-03-10 12:00:00 192.0.2.1 GET /a 1000",
			Entry{Time: at, Addr: "192.0.2.1", Method: "GET", Path: "/a"}},
	} {
		for _, f := range []Format{Auto, W3C} {
			got, r := readW3C(t, "#Fields: "+tc.fields+"\n"+tc.line+"\n", f)
			if len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) {
				t.Errorf("%s, %s: entries %+v (malformed %v)\nwant %+v", tc.fields, f, got, r.Samples(), tc.want)
			}
		}
	}
}

// TestW3CMalformedReasons: the reason each W3C line is refused.
func TestW3CMalformedReasons(t *testing.T) {
	for _, tc := range []struct{ log, reason string }{
		{"#Fields: c-ip date time cs-method cs-uri-stem\n- 2024-03-10 12:00:00 GET /a\n", "no client address (c-ip is -)"},
		{"#Fields: c-dns date time cs-method cs-uri-stem\n- 2024-03-10 12:00:00 GET /a\n", "no client address (c-dns is -)"},
		{"#Fields: x-forwarded-for date time cs-method cs-uri-stem\n- 2024-03-10 12:00:00 GET /a\n", "no client address (X-Forwarded-For is -)"},
		{"#Fields: cs-uri date time c-ip cs-method\nx 2024-03-10 12:00:00 192.0.2.1 GET\n", `bad request target "x"`},
		{"#Fields: date time c-ip cs-method cs-uri-stem sc-status\n2024-03-10 12:00:00 192.0.2.1 GET /a +200\n", `bad sc-status "+200"`},
		{"#Fields: date time c-ip cs-method cs-uri-stem cs(User-Agent)\n2024-03-10 12:00:00 192.0.2.1 GET /a \"curl\"x\n", "text after a quoted field"},
		{"#Fields: date time c-ip cs-method cs-uri-stem cs(User-Agent)\n2024-03-10 12:00:00 192.0.2.1 GET /a \"curl\"\"\n", "field has no closing quote"},
		{"#Date: 2024-03-10 00:00:00\n#Fields: time c-ip cs-method cs-uri-stem\n12:00:00 192.0.2.1 GET /a\n#Date: garbage\n12:00:01 192.0.2.1 GET /b\n", `bad #Date directive "garbage"`},
	} {
		for _, f := range []Format{Auto, W3C} {
			_, r := readW3C(t, tc.log, f)
			if s := r.Samples(); len(s) != 1 || s[0].Reason != tc.reason {
				t.Errorf("%s, %s: malformed %v, want %q", tc.log, f, s, tc.reason)
			}
		}
	}
}

// TestW3CNotDirectives: in a log read as auto, a line starting with '#'
// that is no W3C directive ("#" alone, no colon, an unknown name) is a
// malformed line, counted; read as W3C, it is skipped.
func TestW3CNotDirectives(t *testing.T) {
	log := "#Fields: date time c-ip cs-method cs-uri-stem\n#\n#Date\n#Foo: bar\n2024-03-10 12:00:00 192.0.2.1 GET /a\n"
	for f, bad := range map[Format]int64{Auto: 3, W3C: 0} {
		got, r := readW3C(t, log, f)
		if len(got) != 1 || got[0].Path != "/a" || r.MalformedCount() != bad {
			t.Errorf("%s: entries %+v, malformed %d %v; want /a and %d", f, got, r.MalformedCount(), r.Samples(), bad)
		}
	}
}

// TestW3CRolloverHalfDay: a time without a date field that lies less than
// twelve hours before the newest is on the same day (out of order); more
// than twelve, on the next (the log passed midnight).
func TestW3CRolloverHalfDay(t *testing.T) {
	log := "#Date: 2024-03-10 00:00:00\n#Fields: time c-ip cs-method cs-uri-stem\n" +
		"23:00:00 192.0.2.1 GET /a\n11:30:00 192.0.2.1 GET /b\n10:59:00 192.0.2.1 GET /c\n"
	got, r := readW3C(t, log, W3C)
	want := []time.Time{
		time.Date(2024, 3, 10, 23, 0, 0, 0, time.UTC),
		time.Date(2024, 3, 10, 11, 30, 0, 0, time.UTC),
		time.Date(2024, 3, 11, 10, 59, 0, 0, time.UTC),
	}
	if len(got) != 3 {
		t.Fatalf("entries %+v (malformed %v)", got, r.Samples())
	}
	for i, w := range want {
		if !got[i].Time.Equal(w) {
			t.Errorf("entry %d at %v, want %v", i, got[i].Time, w)
		}
	}
}
