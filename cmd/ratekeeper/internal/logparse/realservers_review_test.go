package logparse

import (
	"strings"
	"testing"
	"time"
)

// TestCLFUserWithSpaces: Apache's %u and nginx's $remote_user log the
// user name of Basic authentication as sent, spaces unescaped (both escape
// only quotes, backslashes and control characters). The user field runs
// to the [time] field; the line was malformed ("no [time] field").
func TestCLFUserWithSpaces(t *testing.T) {
	for line, user := range map[string]string{
		`192.0.2.1 - john doe [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 5 "-" "curl/8"`: "john doe",
		`192.0.2.1 - Ann  Lee [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 5`:              "Ann  Lee",
		`10.0.0.1, 10.0.0.2 - a b c [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 401 5`:        "a b c",
		`192.0.2.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 5 "-" "x [y] z"`:   "frank",
	} {
		r, err := NewReader(strings.NewReader(line+"\n"), "access.log", Options{})
		if err != nil {
			t.Fatal(err)
		}
		es := readAll(t, r)
		if len(es) != 1 {
			t.Errorf("%s: %d entries, malformed %v; want one", line, len(es), r.Samples())
			continue
		}
		if e := es[0]; e.User != user || e.Path != "/a" || !e.Time.Equal(time.Date(2000, 10, 10, 20, 55, 36, 0, time.UTC)) {
			t.Errorf("%s: user %q path %q time %s, want user %q, /a at 2000-10-10T20:55:36Z", line, e.User, e.Path, e.Time, user)
		}
	}
}

// TestCaddyWallTimes: Caddy's JSON encoder writes "ts" in one of its
// time_format settings; wall, wall_milli and wall_nano are
// "2006/01/02 15:04:05" (with 3 or 9 digits of fraction), in UTC. They were
// malformed ("unknown time format").
func TestCaddyWallTimes(t *testing.T) {
	want := time.Date(2024, 3, 10, 12, 0, 1, 0, time.UTC)
	for ts, at := range map[string]time.Time{
		"2024/03/10 12:00:01":           want,
		"2024/03/10 12:00:01.524":       want.Add(524 * time.Millisecond),
		"2024/03/10 12:00:01.524000001": want.Add(524*time.Millisecond + 1),
	} {
		line := `{"level":"info","ts":"` + ts + `","logger":"http.log.access","msg":"handled request","request":{"remote_ip":"2001:db8::7","remote_port":"41342","proto":"HTTP/1.1","method":"POST","host":"example.com","uri":"/login","headers":{"User-Agent":["curl/8"]}},"status":401}`
		r, err := NewReader(strings.NewReader(line+"\n"), "caddy.log", Options{})
		if err != nil {
			t.Fatal(err)
		}
		es := readAll(t, r)
		if len(es) != 1 {
			t.Errorf("ts %q: %d entries, malformed %v; want one", ts, len(es), r.Samples())
			continue
		}
		if e := es[0]; !e.Time.Equal(at) || e.Addr != "2001:db8::7" || e.Method != "POST" || e.Path != "/login" || e.Status != 401 || e.UserAgent != "curl/8" {
			t.Errorf("ts %q: %+v, want POST /login 401 from 2001:db8::7 at %s", ts, e, at)
		}
	}
}

// TestNginxMainFormat: nginx's stock "main" format (the log_format of its
// default nginx.conf) is Combined followed by "$http_x_forwarded_for". The
// header is the entry's X-Forwarded-For and $remote_addr its address, as
// for a JSON line with the same variables, so that trusted proxies find
// the client behind a load balancer. It was dropped: the entry had the
// balancer's address as its only forwarded entry, and every request keyed
// by the balancer. The header is as sent, whatever a client wrote left of
// the nearest proxy's entry ("unknown, 203.0.113.7": the middleware reads
// no entry left of the client); that entry is an address or "unknown". A
// "-" there, a field whose last entry is neither, or one followed by more
// fields leaves the line read as Combined.
func TestNginxMainFormat(t *testing.T) {
	const head = `10.0.0.2 - - [10/Mar/2024:12:00:01 +0000] "GET /items/7 HTTP/1.1" 200 612 "-" "curl/8.5" `
	for _, tc := range []struct {
		tail, xff string
	}{
		{`"203.0.113.7"`, "203.0.113.7"},
		{`"203.0.113.7, 198.51.100.2"`, "203.0.113.7, 198.51.100.2"},
		{`"2001:db8::7,10.0.0.9"`, "2001:db8::7,10.0.0.9"},
		{`"203.0.113.7" `, "203.0.113.7"},
		// With ports (Azure Application Gateway appends the client's), and
		// bracketed IPv6, as keyfunc.IP reads them.
		{`"203.0.113.7:58312"`, "203.0.113.7:58312"},
		{`"[2001:db8::7]:443, [2001:db8::8]"`, "[2001:db8::7]:443, [2001:db8::8]"},
		// Entries a client wrote, and "unknown" for an address a proxy
		// did not know: the header as sent.
		{`"unknown, 203.0.113.7"`, "unknown, 203.0.113.7"},
		{`"not an address,, 203.0.113.7"`, "not an address,, 203.0.113.7"},
		{`"203.0.113.7, unknown"`, "203.0.113.7, unknown"},
		{`"Unknown"`, "Unknown"},
		// No header: the address alone, as for any Combined line.
		{`"-"`, "10.0.0.2"},
		{`"example.com"`, "10.0.0.2"},
		{`"2.75"`, "10.0.0.2"}, // $gzip_ratio, as in nginx's documentation
		{`"203.0.113.7, example.com"`, "10.0.0.2"},
		{`"203.0.113.7" 0.002`, "10.0.0.2"},
		{`12 "web@docker" "http://172.17.0.3:80" 3ms`, "10.0.0.2"}, // Traefik's
	} {
		r, err := NewReader(strings.NewReader(head+tc.tail+"\n"), "access.log", Options{})
		if err != nil {
			t.Fatal(err)
		}
		es := readAll(t, r)
		if len(es) != 1 {
			t.Errorf("...%s: %d entries, malformed %v; want one", tc.tail, len(es), r.Samples())
			continue
		}
		e := es[0]
		if e.Addr != "10.0.0.2" || e.UserAgent != "curl/8.5" || e.Path != "/items/7" || len(e.Headers) != 1 || e.Headers[0] != (Header{"X-Forwarded-For", tc.xff}) {
			t.Errorf("...%s: addr %q UA %q path %q headers %v, want 10.0.0.2, curl/8.5, /items/7 and X-Forwarded-For %q", tc.tail, e.Addr, e.UserAgent, e.Path, e.Headers, tc.xff)
		}
	}
}

// TestApacheVhostFormats: Apache's vhost_combined ("%v:%p %h %l %u %t ...",
// the format of Debian's other_vhosts_access.log) and vhost_common
// ("%v %h %l %u %t ...") put the virtual host before the client. A first
// field that is no IP address followed by one that is, is that virtual
// host: the entry is the client's. Such lines were malformed ("no [time]
// field"), and once the user field could hold spaces, misread (the client
// taken for the ident, and "- -" for a user shared by every anonymous
// request).
func TestApacheVhostFormats(t *testing.T) {
	const when = ` [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 5`
	for _, tc := range []struct{ line, addr, user string }{
		{`example.com:443 192.0.2.1 - -` + when + ` "-" "curl/8"`, "192.0.2.1", ""},
		{`www.example.com:80 2001:db8::1 - ann` + when + ` "-" "curl/8"`, "2001:db8::1", "ann"},
		{`example.com 192.0.2.1 - john doe` + when, "192.0.2.1", "john doe"},
		// A client's host name (HostnameLookups) and its ident: no vhost.
		{`dsl-7.example.net - ann` + when, "dsl-7.example.net", "ann"},
	} {
		r, err := NewReader(strings.NewReader(tc.line+"\n"), "other_vhosts_access.log", Options{})
		if err != nil {
			t.Fatal(err)
		}
		es := readAll(t, r)
		if len(es) != 1 {
			t.Errorf("%s: %d entries, malformed %v; want one", tc.line, len(es), r.Samples())
			continue
		}
		if e := es[0]; e.Addr != tc.addr || e.User != tc.user || e.Path != "/a" {
			t.Errorf("%s: addr %q user %q path %q, want %q, %q, /a", tc.line, e.Addr, e.User, e.Path, tc.addr, tc.user)
		}
	}
}
