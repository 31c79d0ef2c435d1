package main

import (
	"errors"
	"io/fs"
	"os"
	"testing"
)

// TestBoolFlagValueAfterSpaceHint: a boolean flag takes its value after
// "=" only: "--quiet false" sets --quiet and takes "false" for a log.
// When no such file exists, the error says how to give the value; any
// other missing log, or a bare word that is no boolean flag's value,
// gets the error alone.
func TestBoolFlagValueAfterSpaceHint(t *testing.T) {
	_, err := os.Open("false")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Skipf("a file named false is here: %v", err)
	}
	var pe *fs.PathError
	errors.As(err, &pe)
	missing := pe.Err.Error() // the system's words
	const cfg, log = "testdata/rules.yaml", "testdata/access.log"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--quiet", "false", "--config", cfg, log}, "open false: " + missing + " (a boolean flag takes its value after '=': --quiet=false)"},
		{[]string{"--config", cfg, "-json", "true", log}, "open true: " + missing + " (a boolean flag takes its value after '=': --json=true)"},
		{[]string{"--config", cfg, log, "--compare", "0"}, "open 0: " + missing + " (a boolean flag takes its value after '=': --compare=0)"},
		// No hint.
		{[]string{"--quiet", "nolog", "--config", cfg}, "open nolog: " + missing},
		{[]string{"--quiet=true", "false", "--config", cfg}, "open false: " + missing},
		{[]string{"--config", cfg, "--quiet", "--", "false"}, "open false: " + missing},
		{[]string{"--format", "clf", "--config", cfg, "false"}, "open false: " + missing},
	} {
		_, errOut, code := runCmd(append([]string{"replay"}, tc.args...)...)
		if want := "ratekeeper replay: " + tc.want + "\n"; code != exitUsage || errOut != want {
			t.Errorf("replay %q: exit %d, stderr %q; want %d, %q", tc.args, code, errOut, exitUsage, want)
		}
	}
}
