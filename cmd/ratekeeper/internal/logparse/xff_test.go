package logparse

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestApacheLeadingXForwardedFor reads Apache's proxy setup, LogFormat
// "%{X-Forwarded-For}i %l %u %t \"%r\" %>s %b ...": the first field is the
// X-Forwarded-For header as received, a comma-separated list. A list of
// two or more ("203.0.113.7, 10.0.0.2") was malformed ("no [time] field",
// the list's second entry read as the ident), or, written without spaces,
// taken whole for one client address that no key function could read. The
// entry now carries the list as its X-Forwarded-For header, so that the
// configuration's trusted_proxies or trusted_hops choose the client as the
// middleware would, and its last entry as the address (see parseCLF).
func TestApacheLeadingXForwardedFor(t *testing.T) {
	at := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
	xff := func(v string) []Header { return []Header{{Name: "X-Forwarded-For", Value: v}} }
	for _, tc := range []struct {
		name, line string
		want       Entry
	}{
		{"two entries", `203.0.113.7, 10.0.0.2 - - [10/Mar/2024:12:00:00 +0000] "GET /a HTTP/1.1" 200 5 "-" "curl/8.5"`,
			Entry{Time: at, Addr: "10.0.0.2", Method: "GET", Path: "/a", Proto: "HTTP/1.1", Status: 200, UserAgent: "curl/8.5", Headers: xff("203.0.113.7, 10.0.0.2")}},
		{"three entries and a user", `198.51.100.9, 203.0.113.7, 10.0.0.2 - ann [10/Mar/2024:12:00:00 +0000] "POST /login HTTP/1.1" 401 0`,
			Entry{Time: at, Addr: "10.0.0.2", User: "ann", Method: "POST", Path: "/login", Proto: "HTTP/1.1", Status: 401, Headers: xff("198.51.100.9, 203.0.113.7, 10.0.0.2")}},
		{"no spaces", `203.0.113.7,10.0.0.2 - - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 5`,
			Entry{Time: at, Addr: "10.0.0.2", Method: "GET", Path: "/", Proto: "HTTP/1.1", Status: 200, Headers: xff("203.0.113.7,10.0.0.2")}},
		// Spaces before a comma, as a list may have them (RFC 9110's
		// OWS): the list ran to the word before the comma, the rest
		// taken for the ident and the user.
		{"a space before a comma", `unknown, 203.0.113.9 , 10.0.0.4 - ann [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 5`,
			Entry{Time: at, Addr: "10.0.0.4", User: "ann", Method: "GET", Path: "/", Proto: "HTTP/1.1", Status: 200, Headers: xff("unknown, 203.0.113.9 , 10.0.0.4")}},
		{"one address, a space before the comma", `203.0.113.9 ,10.0.0.4 - - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 5`,
			Entry{Time: at, Addr: "10.0.0.4", Method: "GET", Path: "/", Proto: "HTTP/1.1", Status: 200, Headers: xff("203.0.113.9 ,10.0.0.4")}},
		{"IPv6 and a port", `2001:db8::7, [2001:db8::2]:443 - - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 5`,
			Entry{Time: at, Addr: "[2001:db8::2]:443", Method: "GET", Path: "/", Proto: "HTTP/1.1", Status: 200, Headers: xff("2001:db8::7, [2001:db8::2]:443")}},
		// One address is the address and also the header of one entry
		// (the log does not say which it is: %h or, behind one proxy,
		// %{X-Forwarded-For}i), so that trusted_hops: 1 finds it as the
		// middleware would (it had no key: no header).
		{"one entry", `203.0.113.7 - - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 5`,
			Entry{Time: at, Addr: "203.0.113.7", Method: "GET", Path: "/", Proto: "HTTP/1.1", Status: 200, Headers: xff("203.0.113.7")}},
		// A host name (%h with HostnameLookups) is no header entry.
		{"host name", `client.example.com - - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 5`,
			Entry{Time: at, Addr: "client.example.com", Method: "GET", Path: "/", Proto: "HTTP/1.1", Status: 200}},
		// No header (a request that reached Apache without the proxy):
		// "-" as before, an address no key function reads (no key).
		{"none", `- - - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 5`,
			Entry{Time: at, Addr: "-", Method: "GET", Path: "/", Proto: "HTTP/1.1", Status: 200}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(tc.line+"\n"), "xff.log", Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := readAll(t, r)
			if len(got) == 1 && got[0].Time.Equal(tc.want.Time) {
				got[0].Time = tc.want.Time // +0000 is a zone of its own
			}
			if len(got) != 1 || !reflect.DeepEqual(got[0], tc.want) {
				t.Errorf("entries = %+v\nwant %+v (malformed %v)", got, tc.want, r.Samples())
			}
		})
	}
}

// TestApacheXForwardedForMalformed: a list cut short, or followed by no
// ident, user and [time], is malformed with a reason, not read as a list.
func TestApacheXForwardedForMalformed(t *testing.T) {
	for line, reason := range map[string]string{
		`203.0.113.7, 10.0.0.2, [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 5`: "no [time] field",
		`203.0.113.7, - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 5`:         "no [time] field",
		`203.0.113.7,`:          "no client address",
		`203.0.113.7, 10.0.0.2`: "no ident field",
		`203.0.113.7, 10.0.0.2 - - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 2`: `bad status "2"`,
		`, 10.0.0.2 - - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 5`:        "empty entry in the X-Forwarded-For list",
	} {
		r, err := NewReader(strings.NewReader(line+"\n"), "xff.log", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, r); len(got) != 0 || r.MalformedCount() != 1 || r.Samples()[0].Reason != reason {
			t.Errorf("%q: entries %+v, samples %v; want malformed: %s", line, got, r.Samples(), reason)
		}
	}
}

// TestHeaderSlabEntriesIndependent: the X-Forwarded-For headers of
// successive entries share an array (headerSlab), yet each entry's is its
// own: kept entries keep theirs, and an append to one (the JSON and W3C
// parsers append headers) never writes another's.
func TestHeaderSlabEntriesIndependent(t *testing.T) {
	var log strings.Builder
	for i := range 600 {
		fmt.Fprintf(&log, "203.0.113.%d - - [10/Mar/2024:12:00:00 +0000] \"GET / HTTP/1.1\" 200 5\n", i%250)
	}
	r, err := NewReader(strings.NewReader(log.String()), "slab.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	es := readAll(t, r)
	if len(es) != 600 {
		t.Fatalf("%d entries, want 600", len(es))
	}
	for i := range es {
		es[i].Headers = append(es[i].Headers, Header{Name: "X-Other", Value: "x"})
	}
	for i, e := range es {
		want := []Header{{"X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i%250)}, {"X-Other", "x"}}
		if !reflect.DeepEqual(e.Headers, want) {
			t.Fatalf("entry %d: headers %v, want %v", i, e.Headers, want)
		}
	}
}
