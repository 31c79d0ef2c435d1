package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDemoTempDirMissing: demo without --svg, with a temporary directory
// that cannot take its chart (TMPDIR naming no directory), says which
// directory and what to do, before the demo runs. It said "open
// /nonexistent/ratekeeper-demo-1596436430.svg: no such file or
// directory", a name of a file the user never named, from a directory
// the user may not know the command uses.
func TestDemoTempDirMissing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "no-such-dir")
	t.Setenv("TMPDIR", dir)
	out, errOut, code := runCmd("demo")
	if code != exitUsage || out != "" {
		t.Fatalf("demo with TMPDIR=%s: exit %d, stdout %.60q; want 2 and nothing", dir, code, out)
	}
	want := "ratekeeper demo: the temporary directory " + dir + ": no such file or directory"
	if !strings.HasPrefix(errOut, want) || !strings.Contains(errOut, "--svg FILE") || strings.Contains(errOut, "ratekeeper-demo-") {
		t.Errorf("stderr %q; want it to start %q, suggest --svg FILE, and name no file of the command's own", errOut, want)
	}
}
