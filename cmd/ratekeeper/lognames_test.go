package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLogNameCannotForgeReportLines: a log whose name holds a newline
// (a glob over a directory others write to) is named in the report's
// header and in its sampled malformed lines quoted, as keys are, so that
// its name cannot add lines of its own to the report; a plain name as it
// is. The report escaped control characters but let the newline through.
func TestLogNameCannotForgeReportLines(t *testing.T) {
	data, err := os.ReadFile("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	forged := "all policies together: 0 requests, 0 rejected by a limit (0.00%)"
	name := filepath.Join(t.TempDir(), "a\n"+forged+"\n.log")
	if err := os.WriteFile(name, append([]byte("GARBAGE\n"), data...), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd("replay", "--quiet", "--config", "testdata/rules.yaml", name)
	if code == exitUsage {
		t.Fatalf("exit %d; stderr %q", code, errOut)
	}
	n := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimSpace(l) == forged {
			n++
		}
	}
	if n > 0 {
		t.Errorf("the log's name forged the report line %q %d times:\n%.1200s", forged, n, out)
	}
	header, _, _ := strings.Cut(out, "\n")
	if want := " of " + strconv.Quote(name); !strings.HasSuffix(header, want) {
		t.Errorf("report header %q, want it to end with %q", header, want)
	}
	if want := strconv.Quote(name) + ":1: "; !strings.Contains(out, want) {
		t.Errorf("the sampled malformed line is not named %q:\n%s", want, out)
	}
}
