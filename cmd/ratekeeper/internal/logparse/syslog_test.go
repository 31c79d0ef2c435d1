package logparse

import (
	"strings"
	"testing"
	"time"
)

// TestSyslogUnwrapped: an access log that reached its file through syslog
// (nginx's access_log syslog:server=..., Apache's CustomLog "|logger",
// Docker's syslog driver, journalctl's export) has each server line behind
// the syslog header: a time, the host (nginx's nohostname leaves it out),
// the tag. Before, the Common Log Format reading took "Mar" for the
// client's address and "12:00:00 web1 nginx: 192.0.2.1 - -" for the user,
// so that an ip key found no client in any line (every request refused
// for want of a key, with no warning) and a user key made each second a
// new client; a JSON line behind the header was malformed.
func TestSyslogUnwrapped(t *testing.T) {
	const (
		clf  = `192.0.2.1 - ann [10/Mar/2024:12:00:00 +0000] "POST /login HTTP/1.1" 401 12 "-" "curl/8"`
		json = `{"time":"2024-03-10T12:00:00Z","remote_addr":"192.0.2.1","remote_user":"ann","request":"POST /login HTTP/1.1","status":401}`
	)
	for _, tc := range []struct{ name, head string }{
		// rsyslog's and syslog-ng's traditional file format (RFC 3164).
		{"rfc3164", "Mar 10 12:00:00 web1 nginx: "},
		{"rfc3164 pid", "Mar 10 12:00:00 web1 nginx[2345]: "},
		{"rfc3164 one-digit day", "Mar  9 12:00:00 web1 apache: "},
		// nginx's own syslog line, as a collector that writes it raw keeps it.
		{"rfc3164 priority", "<190>Mar 10 12:00:00 web1 nginx: "},
		// nginx's "nohostname" parameter.
		{"rfc3164 no host", "<190>Mar 10 12:00:00 nginx: "},
		// Docker's syslog driver: the tag is the container.
		{"docker tag", "Mar 10 12:00:00 web1 docker/4f1a2b3c[812]: "},
		// rsyslog's RSYSLOG_FileFormat (high-precision time).
		{"rsyslog precise", "2024-03-10T12:00:00.123456+01:00 web1 nginx: "},
		// journalctl -o short-iso and short-iso-precise.
		{"journalctl iso", "2024-03-10T12:00:00+0100 web1 nginx[2345]: "},
		{"journalctl iso precise", "2024-03-10T12:00:00.123456+0100 web1 nginx[2345]: "},
		// RFC 5424, with and without structured data.
		{"rfc5424", "<190>1 2024-03-10T12:00:00.123Z web1 nginx 2345 - - "},
		{"rfc5424 structured data", `<190>1 2024-03-10T12:00:00Z web1 nginx - access [origin ip="10.0.0.1"][meta x="a \] b"] `},
	} {
		for _, line := range []string{clf, json} {
			log := tc.head + line + "\n"
			r, err := NewReader(strings.NewReader(log), "syslog", Options{})
			if err != nil {
				t.Fatal(err)
			}
			es := readAll(t, r)
			if len(es) != 1 {
				t.Errorf("%s: %d entries (malformed %v), want 1 from %q", tc.name, len(es), r.Samples(), log)
				continue
			}
			e := es[0]
			if e.Addr != "192.0.2.1" || e.User != "ann" || e.Method != "POST" || e.Path != "/login" || e.Status != 401 || !e.Time.Equal(time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)) {
				t.Errorf("%s: entry addr %q user %q %s %s %d at %v, want 192.0.2.1, ann, POST /login 401 at 12:00:00Z, from %q", tc.name, e.Addr, e.User, e.Method, e.Path, e.Status, e.Time, log)
			}
		}
	}
}

// TestNotASyslogHeader: lines that only start like a syslog header are
// read as they are: a Common Log Format line of a virtual host or a client
// host name, a W3C entry (a date, a space, a time), and a syslog line whose
// message is no access log line, which stays malformed.
func TestNotASyslogHeader(t *testing.T) {
	const w3c = "#Fields: date time c-ip cs-method cs-uri-stem sc-status\n2024-03-10 12:00:00 192.0.2.1 GET /x 200\n"
	log := `Mar.example.com 192.0.2.1 - - [10/Mar/2024:12:00:00 +0000] "GET /a HTTP/1.1" 200 1` + "\n" +
		`Mar - - [10/Mar/2024:12:00:00 +0000] "GET /b HTTP/1.1" 200 1` + "\n" +
		"Mar 10 12:00:00 web1 kernel: eth0: link up\n" + w3c
	r, err := NewReader(strings.NewReader(log), "a.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	es := readAll(t, r)
	var got []string
	for _, e := range es {
		got = append(got, e.Addr+" "+e.Path)
	}
	want := []string{"192.0.2.1 /a", "Mar /b", "192.0.2.1 /x"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("entries %q, want %q", got, want)
	}
	if s := r.Samples(); len(s) != 1 || s[0].Line != 3 {
		t.Errorf("malformed %v, want line 3 alone (the kernel's message)", s)
	}
}
