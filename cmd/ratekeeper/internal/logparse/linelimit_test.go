package logparse

import (
	"strings"
	"testing"
)

// TestLineLimitExact: a line of up to 64 KiB, not counting its end (LF or
// CRLF), is read; a longer one is malformed, "longer than 64 KiB". The
// limit counted the line end: a line of exactly 64 KiB was refused as
// longer than 64 KiB, and in a CRLF log so was one of 64 KiB less a byte,
// which the same log with LF ends read.
func TestLineLimitExact(t *testing.T) {
	line := func(n int) string { // a Common Log Format line of n bytes
		head := `192.0.2.1 - - [10/Mar/2024:12:00:00 +0000] "GET /`
		tail := ` HTTP/1.1" 200 1`
		return head + strings.Repeat("a", n-len(head)-len(tail)) + tail
	}
	for _, tc := range []struct {
		name string
		n    int
		end  string
		ok   bool
	}{
		{"64 KiB, LF", 64 << 10, "\n", true},
		{"64 KiB, CRLF", 64 << 10, "\r\n", true},
		{"64 KiB less 1, CRLF", 64<<10 - 1, "\r\n", true},
		{"64 KiB and 1, LF", 64<<10 + 1, "\n", false},
		{"64 KiB and 1, CRLF", 64<<10 + 1, "\r\n", false},
		{"64 KiB and 1, no end", 64<<10 + 1, "", false},
	} {
		log := line(tc.n) + tc.end + line(100) + tc.end
		if tc.end == "" { // the long line last, the log ending within it
			log = line(100) + "\n" + line(tc.n)
		}
		r, err := NewReader(strings.NewReader(log), "a.log", Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, r)
		want := 1
		if tc.ok {
			want = 2
		}
		if len(got) != want || r.Lines() != 2 {
			t.Errorf("%s: %d entries of %d lines (malformed %v), want %d of 2", tc.name, len(got), r.Lines(), r.Samples(), want)
		}
		if !tc.ok && (r.MalformedCount() != 1 || r.Samples()[0].Reason != "line longer than 64 KiB") {
			t.Errorf("%s: malformed %v, want the line longer than 64 KiB", tc.name, r.Samples())
		}
	}
}
