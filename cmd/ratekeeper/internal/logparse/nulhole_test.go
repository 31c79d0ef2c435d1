package logparse

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// shortNUL writes each run of NUL bytes in s as "<n NULs>".
func shortNUL(s string) string {
	return regexp.MustCompile("\x00+").ReplaceAllStringFunc(s, func(run string) string { return fmt.Sprintf("<%d NULs>", len(run)) })
}

// TestNULHoleSkipped: a log that logrotate's copytruncate emptied under a
// writer that does not append (a service started with "> access.log": it
// writes on at its own offset) starts with a run of NUL bytes as long as
// the log was, a sparse hole, and the writer's next line after it; a crash
// leaves such runs inside a log too. The NUL bytes are no part of a line.
// Before, the line after a short run was a request from a client whose
// address began with NULs (refused for want of a key: a finding, exit 1,
// in a log with none), and after a run of 64 KiB or more it was malformed,
// "line longer than 64 KiB".
func TestNULHoleSkipped(t *testing.T) {
	const (
		a = `192.0.2.1 - - [10/Mar/2024:12:00:00 +0000] "GET /a HTTP/1.1" 200 1` + "\n"
		b = `192.0.2.2 - - [10/Mar/2024:12:00:01 +0000] "GET /b HTTP/1.1" 200 1` + "\n"
		c = `{"time":"2024-03-10T12:00:02Z","remote_addr":"192.0.2.3","request":"GET /c HTTP/1.1","status":200}` + "\n"
	)
	for _, tc := range []struct {
		name string
		log  string
	}{
		{"short hole first", strings.Repeat("\x00", 5000) + a + b + c},
		{"hole past the line limit first", strings.Repeat("\x00", 200<<10) + a + b + c},
		// The line after the hole goes on past the buffer the hole filled.
		{"hole ending at the buffer's end", strings.Repeat("\x00", bufSize-10) + a + b + c},
		{"hole ending at the second buffer's end", strings.Repeat("\x00", 2*bufSize-10) + a + b + c},
		{"holes inside", a + strings.Repeat("\x00", 70<<10) + b + strings.Repeat("\x00", 3) + c},
		{"hole at the end", a + b + c + strings.Repeat("\x00", 100<<10)},
	} {
		for _, gz := range []bool{false, true} {
			data := []byte(tc.log)
			if gz {
				var buf bytes.Buffer
				zw := gzip.NewWriter(&buf)
				zw.Write(data)
				zw.Close()
				data = buf.Bytes()
			}
			r, err := NewReader(bytes.NewReader(data), "a.log", Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range readAll(t, r) {
				got = append(got, shortNUL(e.Addr+" "+e.Path))
			}
			var bad []string
			for _, m := range r.Samples() {
				bad = append(bad, fmt.Sprintf("line %d: %s", m.Line, m.Reason))
			}
			want := []string{"192.0.2.1 /a", "192.0.2.2 /b", "192.0.2.3 /c"}
			if strings.Join(got, "|") != strings.Join(want, "|") || r.MalformedCount() != 0 {
				t.Errorf("%s (gzip %v): entries %q, malformed %q; want %q and none malformed", tc.name, gz, got, bad, want)
			}
		}
	}
}
