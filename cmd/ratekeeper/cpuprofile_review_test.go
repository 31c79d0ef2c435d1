package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayCPUProfileUnwritable: a --cpuprofile that cannot be written
// (a missing directory, a directory) fails at once, exit 2 and no report,
// with an error that names the flag, as --svg's does: it read "open
// /tmp/x/p: no such file or directory", naming no flag, which a user who
// gave several paths must match up alone.
func TestReplayCPUProfileUnwritable(t *testing.T) {
	dir := t.TempDir()
	for _, bad := range []string{filepath.Join(dir, "no-such-dir", "cpu.prof"), dir} {
		out, errOut, code := runCmd("replay", "--cpuprofile", bad, "--config", "testdata/rules.yaml", "testdata/access.log")
		if want := "ratekeeper replay: --cpuprofile " + bad + ": "; code != exitUsage || out != "" || !strings.HasPrefix(errOut, want) {
			t.Errorf("--cpuprofile %s: exit %d, stdout %d bytes, stderr %q; want exit %d, no report, an error starting %q", bad, code, len(out), errOut, exitUsage, want)
		}
	}
}
