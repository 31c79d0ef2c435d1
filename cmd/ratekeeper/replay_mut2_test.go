//go:build unix

package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
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

// TestReplaySVGUnopenable: --svg naming something that is no regular file
// and cannot be opened for writing (a Unix socket) fails at once, exit 2,
// naming the path.
func TestReplaySVGUnopenable(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "chart.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("cannot make a Unix socket: %v", err)
	}
	defer l.Close()
	out, errOut, code := runCmd("replay", "--quiet", "--svg", sock, "--config", "testdata/rules.yaml", "testdata/access.log")
	if code != exitUsage || out != "" || !strings.Contains(errOut, "--svg "+sock) {
		t.Errorf("--svg naming a socket: exit %d, stdout %d bytes, stderr %q; want exit 2 naming it", code, len(out), errOut)
	}
}

// TestReplaySVGClosedOnFailure: a replay that fails after its chart's
// temporary file was made removes that file and leaves it closed.
func TestReplaySVGClosedOnFailure(t *testing.T) {
	dir := t.TempDir()
	before := openFiles(t)
	_, _, code := runCmd("replay", "--quiet", "--svg", filepath.Join(dir, "replay.svg"), "--config", "testdata/rules.yaml", filepath.Join(dir, "missing.log"))
	if code != exitUsage {
		t.Errorf("exit %d, want %d", code, exitUsage)
	}
	checkClosed(t, before, "the failed replay")
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files left: %v", ents)
	}
}
