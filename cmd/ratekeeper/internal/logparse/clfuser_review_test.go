package logparse

import (
	"strings"
	"testing"
	"time"
)

// TestCLFUserWithBracket: the user field of the Common Log Format
// (Apache's %u, nginx's $remote_user) is the name a client sent in its
// Basic credentials, logged as sent, whether or not they were accepted:
// any client may send one holding " [" (or a whole forged time). The
// parser took the first " [" for the start of the time field, so that
// such a client made every line of its own malformed, and its requests
// went missing from the replay. The time field is the first " [" that a
// time and a quoted request follow.
func TestCLFUserWithBracket(t *testing.T) {
	at := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ user, want string }{
		{"ann", "ann"},
		{"ann [admin]", "ann [admin]"},
		{"x [", "x ["},
		{"x [10/Mar/2024:11:00:00 +0000]", "x [10/Mar/2024:11:00:00 +0000]"},
		{"x [10/Mar/2024:11:00:00 +0000] y", "x [10/Mar/2024:11:00:00 +0000] y"},
	} {
		line := `192.0.2.1 - ` + tc.user + ` [10/Mar/2024:12:00:00 +0000] "POST /login HTTP/1.1" 401 5 "-" "curl"`
		r, err := NewReader(strings.NewReader(line+"\n"), "a.log", Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, r)
		if len(got) != 1 || got[0].User != tc.want || !got[0].Time.Equal(at) || got[0].Path != "/login" || got[0].Status != 401 {
			t.Errorf("user %q: entries %+v (malformed %v), want one by %q at %v to /login, 401", tc.user, got, r.Samples(), tc.want, at)
		}
	}
	// A line with no time field after the user is still malformed.
	r, err := NewReader(strings.NewReader(`192.0.2.1 - x [y] "GET / HTTP/1.1" 200 5`+"\n"), "a.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, r); len(got) != 0 || r.MalformedCount() != 1 {
		t.Errorf("a line without a time: entries %+v, %d malformed; want none, 1 malformed", got, r.MalformedCount())
	}
}
