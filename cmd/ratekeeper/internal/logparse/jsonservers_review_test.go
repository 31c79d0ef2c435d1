package logparse

import (
	"strings"
	"testing"
	"time"
)

// Access-log lines as Caddy v2 and Traefik v2/v3 write them in their JSON
// formats (Caddy: the request's fields in a nested "request" object, its
// headers as lists; Traefik: its own capitalised names, request headers
// kept as "request_<Name>").
const (
	caddyLine = `{"level":"info","ts":1710072000.25,"logger":"http.log.access.log0","msg":"handled request",` +
		`"request":{"remote_ip":"192.0.2.1","remote_port":"54321","client_ip":"192.0.2.1","proto":"HTTP/1.1","method":"POST","host":"example.com","uri":"/login?next=/","headers":{"User-Agent":["curl/8.5.0"],"X-Forwarded-For":["203.0.113.7","10.0.0.2"]}},` +
		`"bytes_read":0,"user_id":"ann","duration":0.0011,"size":12,"status":401,"resp_headers":{"Content-Type":["text/plain"]}}`
	traefikLine = `{"ClientAddr":"192.0.2.2:41234","ClientHost":"192.0.2.2","ClientPort":"41234","ClientUsername":"-",` +
		`"DownstreamContentSize":12,"DownstreamStatus":429,"Duration":1200000,"OriginStatus":0,"RequestAddr":"example.com","RequestHost":"example.com",` +
		`"RequestMethod":"PUT","RequestPath":"/items/7","RequestProtocol":"HTTP/1.1","RequestScheme":"https",` +
		`"StartUTC":"2024-03-10T12:00:01.5Z","StartLocal":"2024-03-10T13:00:01.5+01:00","entryPointName":"web",` +
		`"request_User-Agent":"Mozilla/5.0","request_Referer":"https://example.com/","level":"info","msg":"","time":"2024-03-10T12:00:03Z"}`
)

// TestJSONCaddyAndTraefikDefaults: README and the package doc say JSON
// lines are read with Caddy's and Traefik's field names, without --json-*
// flags. Every line of both was malformed ("no client address field"):
// the default names were top-level nginx-style names only.
func TestJSONCaddyAndTraefikDefaults(t *testing.T) {
	r, err := NewReader(strings.NewReader(caddyLine+"\n"+traefikLine+"\n"), "servers.jsonl", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, r)
	if len(got) != 2 {
		t.Fatalf("%d entries, want 2 (malformed: %v)", len(got), r.Samples())
	}
	want := []Entry{
		{Time: time.Date(2024, 3, 10, 12, 0, 0, 250e6, time.UTC), Addr: "192.0.2.1", User: "ann", Method: "POST", Path: "/login", Query: "next=/", Status: 401, UserAgent: "curl/8.5.0"},
		// Traefik's "time" is when the line was written, at the end of
		// the request; StartUTC is when the request came.
		{Time: time.Date(2024, 3, 10, 12, 0, 1, 500e6, time.UTC), Addr: "192.0.2.2", User: "", Method: "PUT", Path: "/items/7", Status: 429, UserAgent: "Mozilla/5.0", Referer: "https://example.com/"},
	}
	for i, w := range want {
		g := got[i]
		if !g.Time.Equal(w.Time) || g.Addr != w.Addr || g.User != w.User || g.Method != w.Method || g.Path != w.Path || g.Query != w.Query ||
			g.Status != w.Status || g.UserAgent != w.UserAgent || g.Referer != w.Referer {
			t.Errorf("line %d:\n got %+v\nwant %+v", i+1, g, w)
		}
	}
	if r.NoPath() != 0 || r.NoMethod() != 0 {
		t.Errorf("%d lines without a path, %d without a method; want none", r.NoPath(), r.NoMethod())
	}
}

// TestJSONHeaderFromList: a --json-header field that holds a list of
// values (Caddy logs each request header as one) gives the header its
// values joined as HTTP joins repeated fields, ", ". It gave no header.
func TestJSONHeaderFromList(t *testing.T) {
	r, err := NewReader(strings.NewReader(caddyLine+"\n"), "caddy.jsonl", Options{JSON: JSONFields{Addr: "request.remote_ip", Headers: map[string]string{"X-Forwarded-For": "request.headers.X-Forwarded-For"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, r)
	if len(got) != 1 {
		t.Fatalf("%d entries, want 1 (malformed: %v)", len(got), r.Samples())
	}
	if h := got[0].Headers; len(h) != 1 || h[0] != (Header{"X-Forwarded-For", "203.0.113.7, 10.0.0.2"}) {
		t.Errorf("headers %v; want X-Forwarded-For: 203.0.113.7, 10.0.0.2", h)
	}
}

// TestJSONForwardedForDefault: the X-Forwarded-For header is read from the
// usual fields (nginx's $http_x_forwarded_for, Caddy's and Traefik's
// request header), as the User-Agent is, so that trusted proxies choose
// the client as they do for a Common Log Format line's list; a field that
// --json-header maps the header to wins. Without it, every request of a
// JSON log behind a trusted proxy had no client address.
func TestJSONForwardedForDefault(t *testing.T) {
	xff := Header{"X-Forwarded-For", "203.0.113.7, 10.0.0.2"}
	for _, tc := range []struct {
		line    string
		headers map[string]string
		want    []Header
	}{
		{`{"time":"2024-03-10T12:00:00Z","remote_addr":"10.0.0.1","request":"GET / HTTP/1.1","http_x_forwarded_for":"203.0.113.7, 10.0.0.2"}`, nil, []Header{xff}},
		{`{"time":"2024-03-10T12:00:00Z","remote_addr":"10.0.0.1","request":"GET / HTTP/1.1","http_x_forwarded_for":"-"}`, nil, nil},
		{`{"time":"2024-03-10T12:00:00Z","remote_addr":"10.0.0.1","request":"GET / HTTP/1.1","http_x_forwarded_for":"203.0.113.9","xff":"203.0.113.7, 10.0.0.2"}`, map[string]string{"X-Forwarded-For": "xff"}, []Header{xff}},
		{strings.Replace(caddyLine, `"X-Forwarded-For":["203.0.113.7","10.0.0.2"]`, `"X-Forwarded-For":["203.0.113.7, 10.0.0.2"]`, 1), nil, []Header{xff}},
		{strings.Replace(traefikLine, `"request_Referer"`, `"request_X-Forwarded-For":"203.0.113.7, 10.0.0.2","request_Referer"`, 1), nil, []Header{xff}},
	} {
		r, err := NewReader(strings.NewReader(tc.line+"\n"), "a.jsonl", Options{JSON: JSONFields{Headers: tc.headers}})
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, r)
		if len(got) != 1 {
			t.Fatalf("%s: %d entries, want 1 (malformed: %v)", tc.line, len(got), r.Samples())
		}
		if h := got[0].Headers; len(h) != len(tc.want) || len(h) == 1 && h[0] != tc.want[0] {
			t.Errorf("%s: headers %v, want %v", tc.line, h, tc.want)
		}
	}
}
