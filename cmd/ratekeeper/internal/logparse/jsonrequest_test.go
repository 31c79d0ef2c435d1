package logparse

import (
	"strings"
	"testing"
)

// TestJSONRequestLine: nginx's usual JSON log format logs the request
// line ($request, "POST /login?next=/ HTTP/1.1") in a field "request",
// with no method or path field of its own. Such a line was read as GET /
// (the defaults for a missing method and path), so that a policy on
// POST /login saw none of its requests, silently; and naming the field
// with --json-path made every line malformed (a bad target). The request
// line now gives the method, path, query and protocol; a method field of
// its own, where the log has one, still gives the method.
func TestJSONRequestLine(t *testing.T) {
	log := `{"time": "2024-03-10T12:00:00Z", "remote_addr": "192.0.2.1", "request": "POST /login?next=/ HTTP/1.1", "status": "401"}
{"time": "2024-03-10T12:00:01Z", "remote_addr": "192.0.2.1", "request": "GET /items/7 HTTP/2.0", "request_method": "HEAD"}
{"time": "2024-03-10T12:00:02Z", "remote_addr": "192.0.2.1", "request": "POST /login HTTP/1.1", "path": "/other"}
`
	type want struct{ method, path, query, proto string }
	for _, tc := range []struct {
		name   string
		fields JSONFields
		want   []want
	}{
		{"default fields", JSONFields{}, []want{
			{"POST", "/login", "next=/", "HTTP/1.1"},
			{"HEAD", "/items/7", "", "HTTP/2.0"},
			{"GET", "/other", "", ""}, // a path field of its own comes first
		}},
		{"--json-path request", JSONFields{Path: "request"}, []want{
			{"POST", "/login", "next=/", "HTTP/1.1"},
			{"HEAD", "/items/7", "", "HTTP/2.0"},
			{"POST", "/login", "", "HTTP/1.1"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := NewReader(strings.NewReader(log), "j.log", Options{JSON: tc.fields})
			if err != nil {
				t.Fatal(err)
			}
			got := readAll(t, r)
			if len(got) != len(tc.want) {
				t.Fatalf("%d entries, want %d (malformed %v)", len(got), len(tc.want), r.Samples())
			}
			for i, e := range got {
				if g := (want{e.Method, e.Path, e.Query, e.Proto}); g != tc.want[i] {
					t.Errorf("line %d: %+v, want %+v", i+1, g, tc.want[i])
				}
			}
		})
	}
}

// TestJSONRequestObject: a "request" that is an object (Caddy's) is no
// request line: the line is read by its fields, the path from Caddy's
// request.uri by default, the one --json-path names otherwise.
func TestJSONRequestObject(t *testing.T) {
	log := `{"ts": 1710072000.5, "request": {"remote_ip": "192.0.2.1", "method": "POST", "uri": "/login"}}` + "\n"
	for _, tc := range []struct {
		fields JSONFields
		path   string
	}{
		{JSONFields{Addr: "request.remote_ip", Method: "request.method"}, "/login"},
		{JSONFields{Path: "request.path"}, "/"}, // no such field: the default path
	} {
		r, err := NewReader(strings.NewReader(log), "caddy.log", Options{JSON: tc.fields})
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, r)
		if len(got) != 1 || got[0].Method != "POST" || got[0].Path != tc.path || got[0].Addr != "192.0.2.1" {
			t.Fatalf("fields %+v: entries %+v (malformed %v); want one POST %s from 192.0.2.1", tc.fields, got, r.Samples(), tc.path)
		}
	}
}
