package logparse

import (
	"strings"
	"testing"
	"time"
)

// TestComposeLogsUnwrapped: "docker compose logs nginx > access.log"
// writes each line of the service's output after its container's name,
// padded, and " | " ("nginx-1  | ", Compose v1 "nginx_1  | "), and with
// -t after the time Docker received it. Such a line was read as a Common
// Log Format line whose client was the container's name and whose user
// the rest up to the time field ("| 192.0.2.1 - ann"), so that an ip key
// found no client in any line (every request refused for want of a key,
// the replay exiting 1) and a user key one user for all; a JSON line was
// malformed. The line after the prefix is read in its own format, as
// for the container runtimes' envelopes.
func TestComposeLogsUnwrapped(t *testing.T) {
	const (
		clf  = `192.0.2.1 - ann [10/Mar/2024:12:00:00 +0000] "POST /login HTTP/1.1" 401 12 "-" "curl/8"`
		json = `{"time":"2024-03-10T12:00:00Z","remote_addr":"192.0.2.1","remote_user":"ann","request":"POST /login HTTP/1.1","status":401}`
	)
	for _, tc := range []struct{ name, head string }{
		{"compose v2", "nginx-1  | "},
		{"compose v1", "proj_nginx_1     | "},
		{"longest name, no padding", "web.proxy-12 | "},
		{"timestamps", "nginx-1  | 2024-03-10T12:00:00.123456789Z "},
	} {
		for _, line := range []string{clf, json} {
			log := tc.head + line + "\n" + strings.TrimRight(tc.head, " ") + "\n"
			r, err := NewReader(strings.NewReader(log), "compose", Options{})
			if err != nil {
				t.Fatal(err)
			}
			es := readAll(t, r)
			if r.MalformedCount() != 0 {
				t.Errorf("%s: malformed %v, want none in %q", tc.name, r.Samples(), log)
			}
			if len(es) != 1 {
				t.Errorf("%s: %d entries, want 1 from %q", tc.name, len(es), log)
				continue
			}
			e := es[0]
			if e.Addr != "192.0.2.1" || e.User != "ann" || e.Method != "POST" || e.Path != "/login" || e.Status != 401 || !e.Time.Equal(time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)) {
				t.Errorf("%s: entry addr %q user %q %s %s %d at %v, want 192.0.2.1, ann, POST /login 401 at 12:00:00Z, from %q", tc.name, e.Addr, e.User, e.Method, e.Path, e.Status, e.Time, log)
			}
		}
	}
}

// TestNotAComposePrefix: a Common Log Format line whose user (as a client
// sent it) holds " | " is no line of docker compose logs: its first field
// is the client's address, not a name followed by spaces and '|'.
func TestNotAComposePrefix(t *testing.T) {
	log := `192.0.2.1 - a | b [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 1` + "\n" +
		`web1 - - [10/Mar/2024:12:00:00 +0000] "GET /| HTTP/1.1" 200 1` + "\n"
	r, err := NewReader(strings.NewReader(log), "a.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range readAll(t, r) {
		got = append(got, e.Addr+" "+e.User+" "+e.Path)
	}
	if want := []string{"192.0.2.1 a | b /", "web1  /|"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("entries %q, want %q (malformed %v)", got, want, r.Samples())
	}
}

// TestTimestampedContainerLogs: "docker logs -t" and "kubectl logs
// --timestamps" put the time the runtime received each line, RFC 3339,
// and a space before it. A JSON line behind it was malformed (it no
// longer started with '{'); a Common Log Format line was read only as the
// virtual host's line of Apache's vhost_combined is, the time taken for
// the host. The line after the time is read in its own format.
func TestTimestampedContainerLogs(t *testing.T) {
	const (
		clf  = `192.0.2.1 - ann [10/Mar/2024:12:00:00 +0000] "POST /login HTTP/1.1" 401 12 "-" "curl/8"`
		json = `{"time":"2024-03-10T12:00:00Z","remote_addr":"192.0.2.1","remote_user":"ann","request":"POST /login HTTP/1.1","status":401}`
	)
	for _, head := range []string{"2024-03-10T12:00:00.123456789Z ", "2024-03-10T13:00:00.5+01:00 "} {
		for _, line := range []string{clf, json} {
			log := head + line + "\n"
			r, err := NewReader(strings.NewReader(log), "docker", Options{})
			if err != nil {
				t.Fatal(err)
			}
			es := readAll(t, r)
			if len(es) != 1 {
				t.Errorf("%d entries (malformed %v), want 1 from %q", len(es), r.Samples(), log)
				continue
			}
			e := es[0]
			if e.Addr != "192.0.2.1" || e.User != "ann" || e.Method != "POST" || e.Path != "/login" || e.Status != 401 || !e.Time.Equal(time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)) {
				t.Errorf("entry addr %q user %q %s %s %d at %v, want 192.0.2.1, ann, POST /login 401 at 12:00:00Z, from %q", e.Addr, e.User, e.Method, e.Path, e.Status, e.Time, log)
			}
		}
	}
}
