package main

import (
	"io"
	"os"
	"strings"
	"testing"
)

// TestReplayConfigStdin: "replay --config -" reads the configuration from
// standard input, as "check -" does and as a log named "-" is read, with
// the same report as from the file; it failed with "open -: no such file
// or directory", exit 2, naming no flag. With a log named "-" too, it is
// a usage error saying that standard input can be read once.
func TestReplayConfigStdin(t *testing.T) {
	defer func(r io.Reader) { checkStdin = r }(checkStdin)
	data, err := os.ReadFile("testdata/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	wantOut, _, wantCode := runCmd("replay", "--quiet", "--config", "testdata/rules.yaml", "testdata/access.log")
	checkStdin = strings.NewReader(string(data))
	out, errOut, code := runCmd("replay", "--quiet", "--config", "-", "testdata/access.log")
	if code != wantCode || out != wantOut {
		t.Errorf("--config - : exit %d (stderr %q), want %d and the report from the file:\n--- got:\n%s\n--- want:\n%s", code, errOut, wantCode, out, wantOut)
	}
	checkStdin = strings.NewReader("policies:\n  - {name: a, limit: -1, window: 1m}\n")
	if _, errOut, code := runCmd("replay", "--quiet", "--config", "-", "testdata/access.log"); code != exitUsage || !strings.Contains(errOut, "stdin:2:") || !strings.Contains(errOut, "limit") {
		t.Errorf("an invalid configuration on stdin: exit %d, stderr %q; want %d, the problem at stdin:2", code, errOut, exitUsage)
	}
	checkStdin = strings.NewReader(string(data))
	if _, errOut, code := runCmd("replay", "--quiet", "--config", "-", "-"); code != exitUsage || !strings.Contains(errOut, "standard input") {
		t.Errorf("--config - with the log -: exit %d, stderr %q; want %d, standard input named", code, errOut, exitUsage)
	}
}
