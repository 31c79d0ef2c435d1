//go:build unix

package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReplaySVGThroughSymlink: --svg naming a symlink writes the chart to
// the file it links to, as a shell redirection or os.Create does (and as
// replay did before it wrote a temporary file and renamed it over the
// path, which replaced the link with a file of its own).
func TestReplaySVGThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "charts", "2026-11-30.svg")
	if err := os.Mkdir(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte("<svg/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "latest.svg")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runCmd("replay", "--svg", link, "--config", "testdata/rules.yaml", "testdata/access.log")
	if code == exitUsage {
		t.Fatalf("replay: exit %d; stderr: %s", code, errOut)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a symlink (%v, err %v)", link, fi.Mode(), err)
	}
	readSVG(t, target)
	if ents, _ := os.ReadDir(filepath.Dir(target)); len(ents) != 1 {
		t.Errorf("files beside the target: %d, want 1 (no temporary file left)", len(ents))
	}
}

// TestReplaySVGToPipe: --svg naming something that is not a regular file
// (a named pipe here; /dev/stdout, /dev/null alike) writes into it. Replay
// renamed a temporary file over it: the pipe's reader got nothing, and
// /dev/stdout or /dev/null (run as root, who may create files in /dev)
// would have been replaced by a regular file.
func TestReplaySVGToPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "chart.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan string, 1)
	go func() {
		f, err := os.Open(fifo) // blocks until the writer opens it
		if err != nil {
			got <- "open: " + err.Error()
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- string(b)
	}()
	_, errOut, code := runCmd("replay", "--svg", fifo, "--config", "testdata/rules.yaml", "testdata/access.log")
	if code == exitUsage {
		t.Fatalf("replay: exit %d; stderr: %s", code, errOut)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("%s is no longer a named pipe (%v, err %v)", fifo, fi.Mode(), err)
	}
	if s := <-got; !strings.Contains(s, "<svg") {
		t.Errorf("the pipe's reader got %.80q, want the chart", s)
	}
}
