package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplaySyslogLog: the sample log as syslog keeps it (nginx's
// access_log syslog:server=..., written to a file by rsyslog: each line
// behind "Mar 10 12:00:00 web1 nginx: ") replays as the plain log does,
// the file's name aside. Before, every line's client was "Mar": the report
// refused all 3000 requests for want of a key, and exited 1 with nothing
// rejected by a limit.
func TestReplaySyslogLog(t *testing.T) {
	data, err := os.ReadFile("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for line := range strings.Lines(string(data)) {
		b.WriteString("Mar 10 12:00:00 web1 nginx: " + line)
	}
	dir := t.TempDir()
	plain, wrapped := filepath.Join(dir, "plain.log"), filepath.Join(dir, "syslog.log")
	if err := os.WriteFile(plain, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(wrapped, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"replay", "--quiet", "--config", "testdata/rules.yaml"}
	wantOut, wantErr, wantCode := runCmd(append(args, plain)...)
	out, errOut, code := runCmd(append(args, wrapped)...)
	out, errOut = strings.ReplaceAll(out, wrapped, plain), strings.ReplaceAll(errOut, wrapped, plain)
	if got, want := out+errOut, wantOut+wantErr; code != wantCode || got != want {
		g, w := firstDiff(got, want)
		t.Errorf("replay of the syslog file: exit %d, want %d as of the plain log; the output differs, first at\n got: %q\nwant: %q\ntotals:\n got: %q\nwant: %q", code, wantCode, g, w, totals(got), totals(want))
	}
}

// totals returns the line of a replay report that sums up all policies.
func totals(report string) string {
	for line := range strings.Lines(report) {
		if strings.HasPrefix(line, "all policies together:") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}
