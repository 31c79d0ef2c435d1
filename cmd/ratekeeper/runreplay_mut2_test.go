package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if _, errOut, code := runCmd("replay", "--quiet", "--cpuprofile", filepath.Join(t.TempDir(), "no-such-dir", "cpu.pprof"), "--config", "testdata/rules.yaml", "testdata/access.log"); code != exitUsage || !strings.Contains(errOut, "no-such-dir") {
		t.Errorf("--cpuprofile in a missing directory: exit %d, stderr %q; want exit 2 naming it", code, errOut)
	}
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
