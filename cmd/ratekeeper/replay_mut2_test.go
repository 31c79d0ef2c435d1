//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReplaySVGThroughDanglingSymlink: --svg naming a symlink to a file
// not yet made (a "latest.svg" link to today's chart) writes the chart
// there and leaves the link, as a shell redirection does. The temporary
// chart was renamed over the link, which became a file of its own, and
// the file it named was never written.
func TestReplaySVGThroughDanglingSymlink(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "charts"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "latest.svg")
	if err := os.Symlink(filepath.Join("charts", "today.svg"), link); err != nil { // relative, as ln -s makes them
		t.Fatal(err)
	}
	_, errOut, code := runCmd("replay", "--quiet", "--svg", link, "--config", "testdata/rules.yaml", "testdata/access.log")
	if code == exitUsage {
		t.Fatalf("replay: exit %d; stderr: %s", code, errOut)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symlink (err %v)", link, err)
	}
	readSVG(t, filepath.Join(dir, "charts", "today.svg"))
	if left, _ := filepath.Glob(filepath.Join(dir, "*", ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
