package logparse

import (
	"strings"
	"testing"
	"time"
)

// TestJSONNginxVariableNames: nginx's JSON logs are written with
// log_format ... escape=json and named after its variables: $time_local
// (or $time_iso8601, or $msec), $http_referer... A log of them failed on
// every line ("no time field"), and the replay needed --json-time for a
// format it reads without one for Apache's, Caddy's and Traefik's names.
// They are now among the default names.
func TestJSONNginxVariableNames(t *testing.T) {
	log := `{"time_local": "10/Mar/2024:12:00:00 +0000", "remote_addr": "192.0.2.1", "request": "GET / HTTP/1.1", "status": "200", "http_referrer": "https://example.com/"}
{"time_iso8601": "2024-03-10T12:00:01+00:00", "remote_addr": "192.0.2.2", "request": "GET / HTTP/1.1", "status": "200"}
{"msec": "1710072002.500", "remote_addr": "192.0.2.3", "request": "GET / HTTP/1.1", "status": "200"}
`
	r, err := NewReader(strings.NewReader(log), "nginx.json", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, r)
	if len(got) != 3 {
		t.Fatalf("%d entries, want 3 (malformed %v)", len(got), r.Samples())
	}
	base := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
	for i, want := range []time.Time{base, base.Add(time.Second), base.Add(2500 * time.Millisecond)} {
		if !got[i].Time.Equal(want) {
			t.Errorf("line %d: time %v, want %v", i+1, got[i].Time, want)
		}
	}
	if got[0].Referer != "https://example.com/" {
		t.Errorf("line 1: referer %q, want it read from http_referrer", got[0].Referer)
	}
}
