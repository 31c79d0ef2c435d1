package logparse

import (
	"strings"
	"testing"
)

// parseCLFLine parses line as parseCLF does for a Reader, with a fresh
// time cache and header slab.
func parseCLFLine(line string) (Entry, error) {
	var e Entry
	var tc timeCache
	var hs headerSlab
	err := parseCLF(line, &tc, &hs, &e)
	return e, err
}

// TestCLFMalformedReasons: each way a Common Log Format line can be
// malformed is refused with its own reason, the one the replay's samples
// of malformed lines show, quoting the offending text (clipped to 60
// bytes); none panics.
func TestCLFMalformedReasons(t *testing.T) {
	const stamp = `[10/Oct/2000:13:55:36 -0700]`
	long := strings.Repeat("a", 71)
	for _, tc := range []struct{ line, reason string }{
		{`192.0.2.1`, "no client address"},
		{`192.0.2.1 -`, "no ident field"},
		{`10.0.0.1, 10.0.0.2,`, "no ident field"},
		{`10.0.0.1, , 10.0.0.2 - - ` + stamp + ` "GET / HTTP/1.1" 200 1`, "empty entry in the X-Forwarded-For list"},
		{`192.0.2.1 - frank`, "no user field"},
		{`192.0.2.1 - frank `, "no [time] field"},
		{`192.0.2.1 - frank 10/Oct/2000`, "no [time] field"},
		{`192.0.2.1 - - [10/Oct/2000:13:55:36 -0700 "GET / HTTP/1.1" 200 1`, "unterminated [time] field"},
		{`192.0.2.1 - - [10/Oct/2000] "GET / HTTP/1.1" 200 1`, `bad time "10/Oct/2000"`},
		// A "60" whose colon starts the field: no seconds, no panic.
		{`192.0.2.1 - - [12:60] "GET / HTTP/1.1" 200 1`, `bad time "12:60"`},
		{`192.0.2.1 - - ` + stamp + ` GET / HTTP/1.1 200 1`, "request field is not quoted"},
		{`192.0.2.1 - - ` + stamp + ` "GET / HTTP/1.1 200 1`, "request field has no closing quote"},
		{`192.0.2.1 - - ` + stamp + ` "GET / HTTP/1.1" 99 1`, `bad status "99"`},
		{`192.0.2.1 - - ` + stamp + ` "GET / HTTP/1.1" 1000 1`, `bad status "1000"`},
		{`192.0.2.1 - - ` + stamp + ` "GET / HTTP/1.1" - 1`, `bad status "-"`},
		{`192.0.2.1 - - ` + stamp + ` "GET" 200 1`, `bad request line "GET"`},
		{`192.0.2.1 - - ` + stamp + ` " / HTTP/1.1" 200 1`, `bad request line " / HTTP/1.1"`},
		{`192.0.2.1 - - ` + stamp + ` "G@T / HTTP/1.1" 200 1`, `bad request line "G@T / HTTP/1.1"`},
		{`192.0.2.1 - - ` + stamp + ` "@GET / HTTP/1.1" 200 1`, `bad request line "@GET / HTTP/1.1"`},
		{`192.0.2.1 - - ` + stamp + ` "` + strings.Repeat("M", 33) + ` / HTTP/1.1" 200 1`, `bad request line "` + strings.Repeat("M", 33) + ` / HTTP/1.1"`},
		{`192.0.2.1 - - ` + stamp + ` "` + strings.Repeat("M", 33) + ` /` + strings.Repeat("b", 25) + `" 200 1`, `bad request line "` + strings.Repeat("M", 33) + ` /` + strings.Repeat("b", 25) + `"`},
		{`192.0.2.1 - - ` + stamp + ` "` + strings.Repeat("M", 33) + ` /` + strings.Repeat("b", 26) + `" 200 1`, `bad request line "` + strings.Repeat("M", 33) + ` /` + strings.Repeat("b", 25) + `..."`},
		{`192.0.2.1 - - ` + stamp + ` "GET  HTTP/1.1" 200 1`, `bad request target ""`},
		{`192.0.2.1 - - ` + stamp + ` "GET x HTTP/1.1" 200 1`, `bad request target "x"`},
		{`192.0.2.1 - - ` + stamp + ` "GET ` + long + ` HTTP/1.1" 200 1`, `bad request target "` + long[:60] + `..."`},
		{`192.0.2.1 - - ` + stamp + ` "GET * HTTP/1.1" 200 1`, `bad request target "*"`},
		{`192.0.2.1 - - ` + stamp + ` "GET example.com:443 HTTP/1.1" 200 1`, `bad request target "example.com:443"`},
		{`192.0.2.1 - - ` + stamp + ` "GET ://x HTTP/1.1" 200 1`, `bad request target "://x"`},
		{`192.0.2.1 - - ` + stamp + ` "CONNECT :443 HTTP/1.1" 200 1`, `bad request target ":443"`},
		{`192.0.2.1 - - ` + stamp + ` "CONNECT example.com: HTTP/1.1" 200 1`, `bad request target "example.com:"`},
		{`192.0.2.1 - - ` + stamp + ` "CONNECT a/b:443 HTTP/1.1" 200 1`, `bad request target "a/b:443"`},
		{`192.0.2.1 - - ` + stamp + ` "CONNECT example.com:65536 HTTP/1.1" 200 1`, `bad request target "example.com:65536"`},
		{`192.0.2.1 - - ` + stamp + ` "CONNECT example.com:1a HTTP/1.1" 200 1`, `bad request target "example.com:1a"`},
		{`192.0.2.1 - - ` + stamp + ` "CONNECT example.com:70000 HTTP/1.1" 200 1`, `bad request target "example.com:70000"`},
		{`192.0.2.1 - - ` + stamp + ` "GET / HTTP/1.1" 200 1 "ref`, "referer field has no closing quote"},
	} {
		e, err := parseCLFLine(tc.line)
		if err == nil || err.Error() != tc.reason {
			t.Errorf("%s: error %v (entry %+v), want %q", tc.line, err, e, tc.reason)
		}
	}
}

// TestCLFAccepted: lines at the edges of what a Common Log Format line
// may be: the status range 100 to 999, fields apart by more than one
// space or none after the time, an empty referer, every character class of
// a method token and its longest length, the request-target forms, CONNECT
// ports up to 65535.
func TestCLFAccepted(t *testing.T) {
	const head = `192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] `
	m32 := strings.Repeat("M", 32)
	for _, tc := range []struct {
		line                                    string
		method, path, query, proto, referer, ua string
		status                                  int
	}{
		{line: head + `"GET / HTTP/1.1" 100 1`, method: "GET", path: "/", proto: "HTTP/1.1", status: 100},
		{line: head + `"GET / HTTP/1.1" 999 1`, method: "GET", path: "/", proto: "HTTP/1.1", status: 999},
		{line: `192.0.2.1 - - [10/Oct/2000:13:55:36 -0700]"GET /a HTTP/1.1" 200 1`, method: "GET", path: "/a", proto: "HTTP/1.1", status: 200},
		{line: head + `"GET /a HTTP/1.1"  201   5   "-"  "curl"`, method: "GET", path: "/a", proto: "HTTP/1.1", ua: "curl", status: 201},
		{line: head + `"GET /a HTTP/1.1" 200 1 "" "curl"`, method: "GET", path: "/a", proto: "HTTP/1.1", ua: "curl", status: 200},
		{line: head + `"GET /a HTTP/1.1" 200 1 "r\"" "c\\"`, method: "GET", path: "/a", proto: "HTTP/1.1", referer: `r\"`, ua: `c\\`, status: 200},
		{line: head + `"AZaz09!#$%&'*+-.^_` + "`|~" + ` /x HTTP/1.1" 200 1`, method: "AZaz09!#$%&'*+-.^_`|~", path: "/x", proto: "HTTP/1.1", status: 200},
		{line: head + `"` + m32 + ` /x HTTP/1.1" 200 1`, method: m32, path: "/x", proto: "HTTP/1.1", status: 200},
		{line: head + `"GET a://h/p?q HTTP/1.1" 200 1`, method: "GET", path: "/p", query: "q", proto: "HTTP/1.1", status: 200},
		{line: head + `"GET http:///p HTTP/1.1" 200 1`, method: "GET", path: "/p", proto: "HTTP/1.1", status: 200},
		{line: head + `"GET http://example.com HTTP/1.1" 200 1`, method: "GET", path: "/", proto: "HTTP/1.1", status: 200},
		{line: head + `"OPTIONS /x HTTP/1.1" 200 1`, method: "OPTIONS", path: "/x", proto: "HTTP/1.1", status: 200},
		{line: head + `"CONNECT example.com:1 HTTP/1.1" 200 1`, method: "CONNECT", path: "example.com:1", proto: "HTTP/1.1", status: 200},
		{line: head + `"CONNECT example.com:65535 HTTP/1.1" 200 1`, method: "CONNECT", path: "example.com:65535", proto: "HTTP/1.1", status: 200},
		{line: head + `"CONNECT a:443 HTTP/1.1" 200 1`, method: "CONNECT", path: "a:443", proto: "HTTP/1.1", status: 200},
		{line: head + `"CONNECT example.com:9090 HTTP/1.1" 200 1`, method: "CONNECT", path: "example.com:9090", proto: "HTTP/1.1", status: 200},
	} {
		e, err := parseCLFLine(tc.line)
		if err != nil {
			t.Errorf("%s: %v", tc.line, err)
			continue
		}
		if e.Method != tc.method || e.Path != tc.path || e.Query != tc.query || e.Proto != tc.proto ||
			e.Referer != tc.referer || e.UserAgent != tc.ua || e.Status != tc.status || e.Addr != "192.0.2.1" || e.Time.Unix() != 971211336 {
			t.Errorf("%s: entry %+v", tc.line, e)
		}
	}
}
