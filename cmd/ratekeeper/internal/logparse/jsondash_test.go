package logparse

import (
	"strings"
	"testing"
)

// TestJSONDashIsAbsent: "-" is the access logs' word for a value absent
// (Apache's %u and %{Referer}i, Traefik's ClientUsername), in JSON lines
// as in the Common and Combined formats, which drop it. A JSON line's "-"
// user became the user "-": every anonymous client of a log shared one
// key under a policy keyed by user (a silent shared bucket, where the
// Combined line's client has no user); so did its "-" user agent,
// referer and mapped headers under policies keyed by them.
func TestJSONDashIsAbsent(t *testing.T) {
	log := `{"time": "2024-03-10T12:00:00Z", "ip": "192.0.2.1", "user": "-", "user_agent": "-", "referer": "-", "api_key": "-"}
{"time": "2024-03-10T12:00:01Z", "ip": "192.0.2.2", "user": "ann", "user_agent": "curl/8.0", "referer": "https://a.example/", "api_key": "k1"}
`
	r, err := NewReader(strings.NewReader(log), "j.log", Options{JSON: JSONFields{Headers: map[string]string{"X-API-Key": "api_key"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, r)
	if len(got) != 2 {
		t.Fatalf("%d entries, want 2 (malformed %v)", len(got), r.Samples())
	}
	if e := got[0]; e.User != "" || e.UserAgent != "" || e.Referer != "" || len(e.Headers) != 0 {
		t.Errorf(`line 1, every field "-": user %q, user agent %q, referer %q, headers %v; want none`, e.User, e.UserAgent, e.Referer, e.Headers)
	}
	if e := got[1]; e.User != "ann" || e.UserAgent != "curl/8.0" || e.Referer != "https://a.example/" || len(e.Headers) != 1 || e.Headers[0].Value != "k1" {
		t.Errorf("line 2: user %q, user agent %q, referer %q, headers %v; want ann, curl/8.0, https://a.example/, X-API-Key k1", e.User, e.UserAgent, e.Referer, e.Headers)
	}
}
