//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// stdinPipe makes standard input (os.Stdin) a pipe that holds data, until
// the test ends, and returns the pipe's other name, /dev/fd/N.
func stdinPipe(t *testing.T, data string) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(w, data); err != nil { // under the pipe's 64 KiB
		t.Fatal(err)
	}
	w.Close()
	old := os.Stdin
	os.Stdin = r
	t.Cleanup(func() { os.Stdin = old; r.Close() })
	return fmt.Sprintf("/dev/fd/%d", r.Fd())
}

// TestReplayStdinNamedTwice: standard input named twice, as "-" and by a
// path of it (/dev/stdin, /dev/fd/0), or as --config and a log, is a
// usage error. A pipe there was read by two readers in turn, each
// getting some of its bytes: "cat access.log | ratekeeper replay --config
// rules.yaml - /dev/stdin" replayed lines cut in two (9 malformed, not 7)
// and exited 0 where the log exits 1; "cat rules.yaml | ratekeeper replay
// --config /dev/stdin -" read the configuration and then found "no
// parseable line in 0 lines of stdin".
func TestReplayStdinNamedTwice(t *testing.T) {
	data, err := os.ReadFile("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile("testdata/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("logs", func(t *testing.T) {
		lines := strings.SplitAfter(string(data), "\n")
		path := stdinPipe(t, strings.Join(lines[:200], ""))
		_, errOut, code := runCmd("replay", "--quiet", "--config", "testdata/rules.yaml", "-", path)
		if want := "ratekeeper replay: " + path + " given twice"; code != exitUsage || !strings.HasPrefix(errOut, want) {
			t.Errorf("logs - and %s, both standard input: exit %d, stderr:\n%s\nwant exit 2 and %q", path, code, errOut, want)
		}
	})
	t.Run("config", func(t *testing.T) {
		path := stdinPipe(t, string(cfg))
		_, errOut, code := runCmd("replay", "--quiet", "--config", path, "-")
		if want := "ratekeeper replay: --config " + path + " and the log - are the same file"; code != exitUsage || !strings.HasPrefix(errOut, want) {
			t.Errorf("--config %s and the log -, both standard input: exit %d, stderr:\n%s\nwant exit 2 and %q", path, code, errOut, want)
		}
	})
}
