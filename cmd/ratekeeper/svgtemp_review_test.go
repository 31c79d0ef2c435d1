//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// TestReplaySVGNoTemporaryFileWhileReplaying: while the logs are read (a
// replay of large logs takes minutes, one of a pipe as long as it runs),
// nothing lies beside the --svg target; the chart's temporary file is made
// when the chart is written. It was made before the replay, to check the
// path, and removed by a deferred call: a replay stopped by Ctrl-C or kill
// left a hidden, empty ".chart.svg.123456789" beside the chart at each
// run.
func TestReplaySVGNoTemporaryFileWhileReplaying(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "access.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	out := filepath.Join(dir, "charts")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	svg := filepath.Join(out, "chart.svg")
	data, err := os.ReadFile("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		code   int
		errOut string
	}
	done := make(chan result, 1)
	go func() {
		_, errOut, code := runCmd("replay", "--quiet", "--svg", svg, "--config", "testdata/rules.yaml", fifo)
		done <- result{code, errOut}
	}()
	// Opening the pipe for writing returns once the replay has opened it
	// to read the log: past its checks of --svg.
	opened := make(chan *os.File, 1)
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
		}
		opened <- w
	}()
	var w *os.File
	select {
	case w = <-opened:
	case r := <-done:
		t.Fatalf("replay ended before it read the log: exit %d, stderr %s", r.code, r.errOut)
	}
	if w == nil {
		t.FailNow()
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("while the log is read, %s lies beside the chart's path (left there if the replay is interrupted)", e.Name())
	}
	if _, err := w.Write(data); err != nil {
		t.Error(err)
	}
	w.Close()
	r, ok := hangguard.Within(done, 30*time.Second)
	if !ok {
		t.Fatal("replay did not end within 30s of its log's end")
	}
	if r.code == exitUsage {
		t.Fatalf("replay: exit %d; stderr: %s", r.code, r.errOut)
	}
	readSVG(t, svg)
	if ents, _ := os.ReadDir(out); len(ents) != 1 {
		t.Errorf("files in the chart's directory after the replay: %d, want 1 (the chart)", len(ents))
	}
}

// TestReplaySVGMode: the chart has the permissions of the file it
// replaces, and a new one those os.Create gives (0666 less the umask), as
// a shell's redirection and demo --svg give. Replay set every chart to
// 0644: a file kept private (0600) or shared with a group (0664) changed,
// and a umask of 077 was ignored.
func TestReplaySVGMode(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "ref")
	f, err := os.Create(ref)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	fi, err := os.Stat(ref)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		mode os.FileMode // of the file replaced; 0: none
		want os.FileMode
	}{
		{"new.svg", 0, fi.Mode().Perm()},
		{"private.svg", 0o600, 0o600},
		{"shared.svg", 0o664, 0o664},
	} {
		svg := filepath.Join(dir, tc.name)
		if tc.mode != 0 {
			if err := os.WriteFile(svg, []byte("<svg/>"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(svg, tc.mode); err != nil {
				t.Fatal(err)
			}
		}
		_, errOut, code := runCmd("replay", "--quiet", "--svg", svg, "--config", "testdata/rules.yaml", "testdata/access.log")
		if code == exitUsage {
			t.Fatalf("replay: exit %d; stderr: %s", code, errOut)
		}
		readSVG(t, svg)
		if fi, err := os.Stat(svg); err != nil {
			t.Fatal(err)
		} else if got := fi.Mode().Perm(); got != tc.want {
			t.Errorf("%s (was %v): mode %v, want %v", tc.name, tc.mode, got, tc.want)
		}
	}
}
