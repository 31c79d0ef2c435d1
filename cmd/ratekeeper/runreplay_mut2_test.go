package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// TestReplayNegativeFlags: --top and --reorder must not be negative
// (exit 2, said on stderr, before any replay).
func TestReplayNegativeFlags(t *testing.T) {
	for _, flag := range [][2]string{{"--top", "-1"}, {"--reorder", "-1s"}} {
		out, errOut, code := runCmd("replay", flag[0], flag[1], "--config", "testdata/rules.yaml", "testdata/access.log")
		if code != exitUsage || out != "" || !strings.Contains(errOut, flag[0]+" must not be negative") {
			t.Errorf("%s %s: exit %d, stdout %d bytes, stderr %q; want exit 2 and the flag named", flag[0], flag[1], code, len(out), errOut)
		}
	}
}

// TestReplayCPUProfile: --cpuprofile writes a CPU profile of the replay
// (gzip-compressed, as pprof writes them), stopped and complete once the
// command returns.
func TestReplayCPUProfile(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "cpu.pprof")
	before := openFiles(t)
	for range 2 { // a profile left running would fail the second
		_, errOut, code := runCmd("replay", "--quiet", "--cpuprofile", prof, "--config", "testdata/rules.yaml", "testdata/access.log")
		if code != exitFindings {
			t.Fatalf("exit %d, stderr %s", code, errOut)
		}
		data, err := os.ReadFile(prof)
		if err != nil || len(data) < 2 || data[0] != 0x1f || data[1] != 0x8b {
			t.Fatalf("profile: %d bytes (%v), want a gzip-compressed profile", len(data), err)
		}
	}
	checkClosed(t, before, "two profiled replays")
	if _, errOut, code := runCmd("replay", "--quiet", "--cpuprofile", filepath.Join(t.TempDir(), "no-such-dir", "cpu.pprof"), "--config", "testdata/rules.yaml", "testdata/access.log"); code != exitUsage || !strings.Contains(errOut, "no-such-dir") {
		t.Errorf("--cpuprofile in a missing directory: exit %d, stderr %q; want exit 2 naming it", code, errOut)
	}
	// A CPU profile already running (go test -cpuprofile, say) fails the
	// replay's, which leaves its file closed.
	if err := pprof.StartCPUProfile(io.Discard); err != nil {
		t.Fatal(err)
	}
	defer pprof.StopCPUProfile()
	before = openFiles(t)
	if _, errOut, code := runCmd("replay", "--quiet", "--cpuprofile", prof, "--config", "testdata/rules.yaml", "testdata/access.log"); code != exitUsage || !strings.Contains(errOut, "cpu profiling already in use") {
		t.Errorf("--cpuprofile with a profile running: exit %d, stderr %q; want exit 2 and the profiler's error", code, errOut)
	}
	checkClosed(t, before, "the failed profile")
}

// TestReplaySVGWithJSON: with --json, the chart is written but not named
// on standard output, which holds the JSON report alone; the chart is
// readable by others, as a file the shell creates is (0644).
func TestReplaySVGWithJSON(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "replay.svg")
	out, errOut, code := runCmd("replay", "--quiet", "--json", "--svg", svg, "--config", "testdata/rules.yaml", "testdata/access.log")
	if code != exitFindings {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	if !json.Valid([]byte(out)) {
		t.Errorf("stdout is not the JSON report alone:\n%.300s", out)
	}
	readSVG(t, svg)
	if fi, err := os.Stat(svg); err != nil {
		t.Error(err)
	} else if fi.Mode().Perm() != 0o644 {
		t.Errorf("chart mode %v, want 0644", fi.Mode().Perm())
	}
}

// TestReplayOutputErrorOnce: a report that cannot be written is an error
// (exit 2) said once on stderr, and the replay stops there.
func TestReplayOutputErrorOnce(t *testing.T) {
	var e bytes.Buffer
	code := run([]string{"replay", "--quiet", "--config", "testdata/rules.yaml", "testdata/access.log"}, failingWriter{}, &e)
	if code != exitUsage || strings.Count(e.String(), "no space left on device") != 1 {
		t.Errorf("exit %d, stderr %q; want exit 2 and the write error said once", code, e.String())
	}
}

// TestReplaySVGWriteError: a chart that cannot be written (to /dev/full,
// a device every write to fails) is an error: exit 2, said on stderr.
func TestReplaySVGWriteError(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skipf("no /dev/full to fail the writes: %v", err)
	}
	_, errOut, code := runCmd("replay", "--quiet", "--svg", "/dev/full", "--config", "testdata/rules.yaml", "testdata/access.log")
	if code != exitUsage || !strings.Contains(errOut, "ratekeeper replay: ") || !strings.Contains(errOut, "no space left on device") {
		t.Errorf("--svg /dev/full: exit %d, stderr %q; want exit 2 and the write error", code, errOut)
	}
}

// TestReplayNoKeyIsAFinding: a request refused for want of a key (400)
// is a finding, exit 1, as a rejection is, even alone.
func TestReplayNoKeyIsAFinding(t *testing.T) {
	dir := t.TempDir()
	cfg, log := filepath.Join(dir, "user.yaml"), filepath.Join(dir, "access.log")
	if err := os.WriteFile(cfg, []byte("policies:\n  - {name: u, limit: 100, window: 1m, key: user}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, []byte(`192.0.2.1 - - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 1
192.0.2.1 - ann [10/Mar/2024:12:00:01 +0000] "GET / HTTP/1.1" 200 1
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd("replay", "--quiet", "--config", cfg, log)
	if code != exitFindings || !strings.Contains(out, "0 rejected by a limit (0.00%), 1 more refused for want of a key") {
		t.Errorf("exit %d (stderr %q), report:\n%s\nwant exit 1, nothing rejected by a limit, one request without a key", code, errOut, out)
	}
}

// TestReplayStdinTwice: standard input named twice is refused, named,
// before anything is read.
func TestReplayStdinTwice(t *testing.T) {
	out, errOut, code := runCmd("replay", "--config", "testdata/rules.yaml", "-", "-")
	if code != exitUsage || out != "" || !strings.HasPrefix(errOut, "ratekeeper replay: - given twice") {
		t.Errorf("replay - -: exit %d, stdout %q, stderr %q; want exit 2 and - given twice", code, out, errOut)
	}
}

// TestReplayOutputIsStdin: an output naming the file standard input is
// redirected from (replay --svg access.log - < access.log) is refused
// before anything is written: the log is kept.
func TestReplayOutputIsStdin(t *testing.T) {
	data, err := os.ReadFile("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(log, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	defer func(f *os.File) { os.Stdin = f }(os.Stdin)
	os.Stdin = f
	for _, flag := range []string{"--svg", "--cpuprofile"} {
		out, errOut, code := runCmd("replay", "--quiet", flag, log, "--config", "testdata/rules.yaml", "-")
		got, _ := os.ReadFile(log)
		if code != exitUsage || out != "" || !strings.Contains(errOut, flag+" "+log+" is also a log") || !bytes.Equal(got, data) {
			t.Errorf("%s naming standard input's file: exit %d, stdout %d bytes, stderr %q, log kept %v; want exit 2, the output refused, the log kept", flag, code, len(out), errOut, bytes.Equal(got, data))
		}
	}
}

// TestReplayTwoFreshOutputs: --svg and --cpuprofile naming two files yet
// to be made are both written; only the same path is refused.
func TestReplayTwoFreshOutputs(t *testing.T) {
	dir := t.TempDir()
	svg, prof := filepath.Join(dir, "replay.svg"), filepath.Join(dir, "cpu.pprof")
	_, errOut, code := runCmd("replay", "--quiet", "--svg", svg, "--cpuprofile", prof, "--config", "testdata/rules.yaml", "testdata/access.log")
	if code != exitFindings {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	readSVG(t, svg)
	if fi, err := os.Stat(prof); err != nil || fi.Size() == 0 {
		t.Errorf("no profile written (%v)", err)
	}
}

// TestLogsSize: the progress of a replay is out of the logs' total size,
// unknown (-1) when one of them is read once (standard input, a pipe),
// wherever it is among them.
func TestLogsSize(t *testing.T) {
	pipe := &source{r: &aheadReader{Reader: new(logparse.Reader)}}
	for _, tc := range []struct {
		srcs []*source
		want int64
	}{
		{[]*source{{size: 100}, {size: 50}}, 150},
		{[]*source{{size: 100}, pipe, {size: 50}}, -1},
		{[]*source{pipe, {size: 100}}, -1},
		{nil, 0},
	} {
		if got := logsSize(tc.srcs); got != tc.want {
			t.Errorf("logsSize(%d sources) = %d, want %d", len(tc.srcs), got, tc.want)
		}
	}
}

// TestReplaySVGDirectory: --svg naming a directory fails at once, said in
// so many words.
func TestReplaySVGDirectory(t *testing.T) {
	dir := t.TempDir()
	_, errOut, code := runCmd("replay", "--quiet", "--svg", dir, "--config", "testdata/rules.yaml", "testdata/access.log")
	if want := "ratekeeper replay: --svg " + dir + ": is a directory\n"; code != exitUsage || errOut != want {
		t.Errorf("--svg DIR: exit %d, stderr %q; want exit 2 and %q", code, errOut, want)
	}
}
