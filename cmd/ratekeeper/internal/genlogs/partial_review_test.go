//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
)

// fsizeEnv names the -o file TestGenlogsFileSizeLimitProcess writes, under
// a file size limit, in a test binary run by TestOutputFailureLeavesNoLog.
const fsizeEnv = "GENLOGS_TEST_FSIZE_OUT"

// TestGenlogsFileSizeLimitProcess runs genlogs -o under a 64 KiB file size
// limit (a full disk alike: writes past it fail with EFBIG) when the test
// binary is started by TestOutputFailureLeavesNoLog; else it does nothing.
func TestGenlogsFileSizeLimitProcess(t *testing.T) {
	out, ok := os.LookupEnv(fsizeEnv)
	if !ok {
		return
	}
	signal.Ignore(syscall.SIGXFSZ)
	lim := syscall.Rlimit{Cur: 64 << 10, Max: 64 << 10}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		os.Exit(4)
	}
	os.Exit(exitCode(run([]string{"-n", "20000", "-o", out}, io.Discard), os.Stderr))
}

// TestOutputFailureLeavesNoLog: genlogs -o FILE failing part way (a full
// disk, here a file size limit) left FILE truncated to what was written, a
// shorter log that reads as a whole one (os.Create had emptied a previous
// one first): a benchmark input or a sample log silently smaller. The log
// is written whole or not at all: FILE is as it was, or absent.
func TestOutputFailureLeavesNoLog(t *testing.T) {
	dir := t.TempDir()
	kept := filepath.Join(dir, "kept.log")
	if err := os.WriteFile(kept, []byte("an earlier log\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{kept, filepath.Join(dir, "new.log")} {
		before, _ := os.ReadFile(out)
		cmd := exec.Command(os.Args[0], "-test.run=^TestGenlogsFileSizeLimitProcess$")
		cmd.Env = append(os.Environ(), fsizeEnv+"="+out)
		msg, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
			t.Fatalf("genlogs -o %s under a file size limit: %v, want exit status 2; output:\n%s", out, err, msg)
		}
		after, err := os.ReadFile(out)
		if before == nil && err == nil {
			t.Errorf("a failed genlogs -o %s left %d bytes there", out, len(after))
		} else if before != nil && string(after) != string(before) {
			t.Errorf("a failed genlogs -o %s left %d bytes there (%.40q...), want the earlier %q", out, len(after), after, before)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			t.Errorf("files in %s: %d, want 1 (no temporary file left)", dir, len(ents))
		}
	}
}
