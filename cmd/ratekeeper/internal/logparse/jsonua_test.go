package logparse

import (
	"strings"
	"testing"
)

// A JSON log's user agent and referer, under their usual names (genlogs
// writes user_agent, nginx's escape=json formats http_user_agent), fill
// the entry as a Combined line's do, for policies keyed by them; a field
// mapped to the header explicitly (--json-header) takes their place.
func TestJSONUserAgentAndReferer(t *testing.T) {
	log := `{"time": "2023-11-14T22:13:20Z", "ip": "192.0.2.9", "user_agent": "curl/8.0", "referer": "https://a.example/"}
{"time": "2023-11-14T22:13:21Z", "ip": "192.0.2.9", "http_user_agent": "Mozilla/5.0", "http_referer": "https://b.example/"}
{"time": "2023-11-14T22:13:22Z", "ip": "192.0.2.9"}
`
	r, err := NewReader(strings.NewReader(log), "j.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, r)
	want := [][2]string{{"curl/8.0", "https://a.example/"}, {"Mozilla/5.0", "https://b.example/"}, {"", ""}}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d (malformed %v)", len(got), len(want), r.Samples())
	}
	for i, e := range got {
		if e.UserAgent != want[i][0] || e.Referer != want[i][1] {
			t.Errorf("line %d: user agent %q, referer %q; want %q, %q", i+1, e.UserAgent, e.Referer, want[i][0], want[i][1])
		}
	}

	r, err = NewReader(strings.NewReader(log), "j.log", Options{JSON: JSONFields{Headers: map[string]string{"User-Agent": "http_user_agent"}}})
	if err != nil {
		t.Fatal(err)
	}
	got = readAll(t, r)
	if e := got[0]; e.UserAgent != "" || len(e.Headers) != 0 {
		t.Errorf("with User-Agent mapped to http_user_agent, line 1: user agent %q, headers %v; want none", e.UserAgent, e.Headers)
	}
	if e := got[1]; e.UserAgent != "" || len(e.Headers) != 1 || e.Headers[0].Value != "Mozilla/5.0" {
		t.Errorf("with User-Agent mapped to http_user_agent, line 2: user agent %q, headers %v; want the header only", e.UserAgent, e.Headers)
	}
}
