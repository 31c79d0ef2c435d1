package logparse

import (
	"strings"
	"testing"
	"time"
)

// TestJournalctlOutputs: journalctl's other short outputs put the time
// before the host in forms of their own: -o short-precise the RFC 3164
// time with microseconds, -o short-full the weekday, date, time and zone,
// -o short-unix Unix seconds with microseconds. Their lines were not taken
// for syslog lines, and worse, were read as Common Log Format lines, not
// malformed: "Mar" (or "Sun", or the seconds) the client's address, the
// rest of the header the user, so that an ip key found no client in any
// of them (every request refused for want of a key, the replay exiting 1)
// and a user key counted each second a new client.
func TestJournalctlOutputs(t *testing.T) {
	const clf = `192.0.2.1 - ann [10/Mar/2024:12:00:00 +0000] "POST /login HTTP/1.1" 401 12 "-" "curl/8"`
	for _, tc := range []struct{ name, head string }{
		{"short-precise", "Mar 10 12:00:00.123456 web1 nginx[2345]: "},
		{"short-precise zero-padded day", "Mar 09 12:00:00.123456 web1 nginx[2345]: "},
		{"short-precise no host", "Mar 10 12:00:00.123456 nginx[2345]: "},
		{"short-full", "Sun 2024-03-10 13:00:00 CET web1 nginx[2345]: "},
		{"short-full numeric zone", "Sun 2024-03-10 15:00:00 +03 web1 nginx[2345]: "},
		{"short-unix", "1710072000.123456 web1 nginx[2345]: "},
	} {
		log := tc.head + clf + "\n"
		r, err := NewReader(strings.NewReader(log), "journal", Options{})
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
