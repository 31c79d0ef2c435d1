package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serverLogs splits the sample log testdata/access.log between two
// servers, alternate lines each, written in dir as a.log and b.log; it
// returns their lines.
func serverLogs(t *testing.T, dir string) (a, b []string) {
	t.Helper()
	data, err := os.ReadFile("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for line := range strings.Lines(string(data)) {
		if i%2 == 0 {
			a = append(a, line)
		} else {
			b = append(b, line)
		}
		i++
	}
	writeLog(t, filepath.Join(dir, "a.log"), a)
	writeLog(t, filepath.Join(dir, "b.log"), b)
	return a, b
}

func writeLog(t *testing.T, path string, lines []string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// farAhead is a line of the sample logs' traffic stamped years ahead of
// them (a wrong clock, a corrupt line).
const farAhead = `198.51.100.9 - - [10/Mar/2031:12:00:00 +0000] "GET / HTTP/1.1" 200 512 "-" "curl/8.5.0"` + "\n"

// TestReplayLineFarAheadInItsLog: a line stamped far ahead of the lines
// after it in its own log (years: a wrong clock) does not move the rest of
// the replay. Before, at the head of one of two servers' logs, it sorted
// that log last among the logs (by its first time) and moved the newest
// time read years ahead: the log's own lines came after the other log's,
// all late, decided apart from them, and fewer were rejected; in the
// middle of a log, every line after it was late. Now the line is left out,
// counted and warned about, naming the log and the line: the decisions
// are those of the logs without it.
func TestReplayLineFarAheadInItsLog(t *testing.T) {
	dir := t.TempDir()
	a, _ := serverLogs(t, dir)
	args := []string{"replay", "--quiet", "--config", "testdata/rules.yaml"}
	want, _, wantCode := runCmd(append(args, filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log"))...)
	if !strings.Contains(want, "rejected by a limit") || strings.Contains(want, "out of time order") {
		t.Fatalf("the two servers' logs do not replay in order:\n%s", want)
	}
	for _, tc := range []struct {
		name  string
		lines []string
		line  int // of the line far ahead
	}{
		{"head", append([]string{farAhead}, a...), 1},
		{"middle", append(append(append([]string{}, a[:700]...), farAhead), a[700:]...), 701},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := filepath.Join(dir, tc.name+".log")
			writeLog(t, bad, tc.lines)
			got, errOut, code := runCmd(append(args, bad, filepath.Join(dir, "b.log"))...)
			if g, w := decisions(got), decisions(want); code != wantCode || g != w {
				t.Errorf("exit %d, want %d; decisions\n%s\nwant, as without the line far ahead,\n%s", code, wantCode, g, w)
			}
			if strings.Contains(got, "out of time order by more than") {
				t.Errorf("lines counted late:\n%s", got)
			}
			if !strings.Contains(got, "to 2024-03-10T12:59:59Z") {
				t.Errorf("the report's span is not the logs' own:\n%s", got)
			}
			warn := fmt.Sprintf("%s: 1 line stamped far ahead of the lines after it, by more than 1m0s, the reorder window (the first: line %d, at 2031-03-10T12:00:00Z, ", bad, tc.line)
			if !strings.Contains(errOut, "ratekeeper replay: warning: "+warn) || !strings.Contains(got, "  warning: "+warn) {
				t.Errorf("no warning %q on standard error and in the report; stderr:\n%s\nreport:\n%s", warn, errOut, got)
			}
			js, _, _ := runCmd(append([]string{"replay", "--quiet", "--json", "--config", "testdata/rules.yaml"}, bad, filepath.Join(dir, "b.log"))...)
			if !strings.Contains(js, `"far_ahead": 1,`) {
				t.Errorf("the JSON report does not count the line far ahead:\n%.600s", js)
			}
		})
	}
}
