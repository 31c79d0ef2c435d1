package main

import (
	"os"
	"strings"
	"testing"
)

// TestEmptyFileNames: a flag that names a file given "" (an unset shell
// variable: demo --svg "$OUT") is a usage error naming the flag, in demo
// as in replay. demo wrote its chart to a new file in the temporary
// directory, as without --svg, and exited 0; replay --config "" said only
// "want --config FILE and at least one LOG", with a log given.
func TestEmptyFileNames(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	for _, tc := range []struct {
		flag string
		args []string
	}{
		{"--svg", []string{"demo", "--svg", ""}},
		{"--svg", []string{"demo", "--svg="}},
		{"--config", []string{"replay", "--config", "", "testdata/access.log"}},
		{"--svg", []string{"replay", "--config", "testdata/rules.yaml", "--svg", "", "testdata/access.log"}},
	} {
		args := tc.args
		out, errOut, code := runCmd(args...)
		if want := tc.flag + `: want a FILE name, not ""`; code != exitUsage || !strings.Contains(firstLine(errOut), want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", args, code, firstLine(errOut), want)
		}
		if out != "" {
			t.Errorf("%q: stdout %.80q, want none", args, out)
		}
	}
	if ents, _ := os.ReadDir(tmp); len(ents) > 0 {
		t.Errorf("%d files left in the temporary directory (%s ...)", len(ents), ents[0].Name())
	}
}
