package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestPeekSourceRegularFile: a regular log is peeked at and closed, to be
// opened again when the replay reaches it: its source keeps no reader and
// no file, and has the log's size (for progress) and first time.
func TestPeekSourceRegularFile(t *testing.T) {
	fi, err := os.Stat("testdata/access.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	s, err := peekSource("testdata/access.jsonl", logparse.Options{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if s.r != nil || s.closer != nil || s.pending != nil || s.size != fi.Size() || s.eof || s.first.IsZero() {
		t.Errorf("source %+v; want no reader, file or pending entry kept, size %d, a first time", s, fi.Size())
	}
}

// openFiles returns the files the process has open: each descriptor's
// target, by descriptor. It leaves out the files of /proc and /sys, which
// the runtime (reading its cgroup's CPU limit), the race detector and the
// listing itself open on threads of their own at any moment, and the
// files mapped into the process (the test binary, the C library under
// -race): a CPU profile's writer, started on a goroutine of its own,
// opens each to read its build ID, as TestReplayCPUProfile's own profile
// does while the replay runs. No file a command opens is mapped. The test
// skips, saying why, where /proc/self/fd does not list them.
func openFiles(t *testing.T) map[string]string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot list open files: %v", err)
	}
	mapped := mappedFiles(t)
	files := make(map[string]string, len(ents))
	for _, e := range ents {
		target, err := os.Readlink("/proc/self/fd/" + e.Name())
		if err != nil || strings.HasPrefix(target, "/proc/") || strings.HasPrefix(target, "/sys/") || mapped[target] {
			continue // closed since it was listed, or not the test's
		}
		files[e.Name()] = target
	}
	return files
}

// mappedFiles returns the files mapped into the process, from
// /proc/self/maps (a path is a line's sixth field, where it has one).
func mappedFiles(t *testing.T) map[string]bool {
	t.Helper()
	data, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skipf("cannot list mapped files: %v", err)
	}
	mapped := make(map[string]bool)
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) >= 6 && strings.HasPrefix(f[5], "/") {
			mapped[strings.Join(f[5:], " ")] = true
		}
	}
	return mapped
}

// checkClosed fails the test if a file is open now that was not open at
// before (openFiles's answer then): after says after what.
func checkClosed(t *testing.T, before map[string]string, after string) {
	t.Helper()
	var left []string
	for fd, target := range openFiles(t) {
		if before[fd] != target {
			left = append(left, target)
		}
	}
	if len(left) > 0 {
		t.Errorf("files left open after %s: %v", after, left)
	}
}

// TestPeekSourceClosesFiles: peeking at regular logs leaves no file open,
// whether the log has entries, none, or is refused (zstd-compressed).
func TestPeekSourceClosesFiles(t *testing.T) {
	dir := t.TempDir()
	empty, zstd := filepath.Join(dir, "empty.log"), filepath.Join(dir, "access.log.zst")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(zstd, []byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	before := openFiles(t)
	for range 10 {
		for _, name := range []string{"testdata/access.log", empty, zstd, dir} {
			_, err := peekSource(name, logparse.Options{}, time.Minute)
			if (err != nil) != (name == zstd || name == dir) { // a directory cannot be read
				t.Fatalf("peekSource(%s): %v", name, err)
			}
		}
	}
	checkClosed(t, before, "peeking at 40 logs")
}

// TestPeekSourcePipeClosable: a log read once (a pipe named by its path,
// as a shell's <(zcat access.log.gz)) keeps its file open for the replay,
// as what the source closes once replayed.
func TestPeekSourcePipeClosable(t *testing.T) {
	name := pipeLog(t)
	before := openFiles(t)
	s, err := peekSource(name, logparse.Options{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if s.r == nil || s.pending == nil || s.closer == nil {
		t.Fatalf("source %+v; want its reader, the entry read ahead and its file kept", s)
	}
	s.closer.Close()
	checkClosed(t, before, "the source is closed")
}

// TestPeekSourceMissing: a log that cannot be opened is an error naming
// it, with the system's reason.
func TestPeekSourceMissing(t *testing.T) {
	name := filepath.Join(t.TempDir(), "missing.log")
	if _, err := peekSource(name, logparse.Options{}, time.Minute); !os.IsNotExist(err) || !strings.Contains(err.Error(), name) {
		t.Errorf("peekSource(%s) = %v, want the error opening it", name, err)
	}
}

// TestReplayStdin: "-" replays standard input, with the same report as
// the file it reads (the name aside: "stdin", see TestReplayStdinName).
func TestReplayStdin(t *testing.T) {
	data, err := os.ReadFile("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	go func() {
		w.Write(data)
		w.Close()
	}()
	defer func(f *os.File) { os.Stdin = f }(os.Stdin)
	os.Stdin = r
	want, _, wantCode := runCmd("replay", "--quiet", "--config", "testdata/rules.yaml", "testdata/access.log")
	got, errOut, code := runCmd("replay", "--quiet", "--config", "testdata/rules.yaml", "-")
	io.Copy(io.Discard, r) // a writer still blocked on a full pipe ends
	if code != wantCode || got != strings.ReplaceAll(want, "testdata/access.log", "stdin") {
		t.Errorf("from standard input: exit %d (want %d), stderr %q; report:\n%s\n--- want (from the file):\n%s", code, wantCode, errOut, got, want)
	}
}

// TestReplayEmptyLogsLast: empty logs given before another are replayed
// (and listed) after it, in the order given.
func TestReplayEmptyLogsLast(t *testing.T) {
	dir := t.TempDir()
	empty1, empty2 := filepath.Join(dir, "empty1.log"), filepath.Join(dir, "empty2.log")
	for _, name := range []string{empty1, empty2} {
		if err := os.WriteFile(name, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, errOut, _ := runCmd("replay", "--quiet", "--config", "testdata/rules.yaml", "testdata/access.log", empty1, empty2)
	if !strings.Contains(out, "testdata/access.log, "+empty1+", "+empty2) {
		t.Errorf("the empty logs are not listed last, in the order given:\n%s%s", out, errOut)
	}
}

// TestSourceOpenRefused: a log replaced, between the peek and the replay,
// by one the replay refuses (zstd-compressed) fails to open, and its file
// is closed.
func TestSourceOpenRefused(t *testing.T) {
	name := filepath.Join(t.TempDir(), "access.log")
	data, err := os.ReadFile("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := peekSource(name, logparse.Options{}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	before := openFiles(t)
	if _, _, _, err := s.open(logparse.Options{}); err == nil || !strings.Contains(err.Error(), "zstd") {
		t.Errorf("open = %v, want the log refused as zstd-compressed", err)
	}
	checkClosed(t, before, "the refused open")
}

// TestReplayPeekErrorClosesLogs: a log that cannot be opened fails the
// replay (exit 2), and the logs peeked at before it, a pipe among them,
// are closed.
func TestReplayPeekErrorClosesLogs(t *testing.T) {
	pipe := pipeLog(t)
	before := openFiles(t)
	missing := filepath.Join(t.TempDir(), "missing.log")
	_, errOut, code := runCmd("replay", "--quiet", "--config", "testdata/rules.yaml", "testdata/access.log", pipe, missing)
	if code != exitUsage || !strings.Contains(errOut, missing) {
		t.Errorf("exit %d, stderr %q; want exit 2 naming the missing log", code, errOut)
	}
	checkClosed(t, before, "the failed replay")
}

// pipeLog returns a path naming the read end of a pipe that holds one
// JSON log line, as a shell's <(zcat access.log.gz) does; the read end is
// closed when the test ends. The test skips, saying why, where no path
// names a pipe.
func pipeLog(t *testing.T) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	name := fmt.Sprintf("/dev/fd/%d", r.Fd())
	if _, err := os.Stat(name); err != nil {
		t.Skipf("no path names the pipe: %v", err)
	}
	w.Write([]byte(`{"time":"2024-03-10T12:00:00Z","ip":"192.0.2.1","path":"/"}` + "\n"))
	w.Close()
	return name
}

// TestOpenFilesSeesALeakNotTheProfiler: openFiles leaves out what a CPU
// profile's writer opens (the mapped test binary), which made
// TestReplayCPUProfile fail in CI ("files left open after the failed
// profile: [.../ratekeeper.test]"), yet still lists a file left open.
func TestOpenFilesSeesALeakNotTheProfiler(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("no executable path to open: %v", err)
	}
	before := openFiles(t)
	f, err := os.Open(exe) // as the profile writer's build ID read does
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	leak, err := os.Open("testdata/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer leak.Close()
	var left []string
	for fd, target := range openFiles(t) {
		if before[fd] != target {
			left = append(left, filepath.Base(target))
		}
	}
	if len(left) != 1 || left[0] != "rules.yaml" {
		t.Errorf("new open files %v; want [rules.yaml] alone (the executable %s left out)", left, exe)
	}
}
