package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunWritesReport runs the whole program at a tiny size (no Redis) and
// checks that the report has every table.
func TestRunWritesReport(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sub", "load.md")
	var stdout bytes.Buffer
	err := run([]string{"-no-redis", "-out", out, "-limit", "10", "-window", "100ms", "-windows", "3",
		"-rounds", "1", "-max-dur", "100ms", "-lat-dur", "100ms", "-flood-keys", "5000", "-flood-max", "640", "-conns", "8"}, &stdout)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, stdout.Bytes()) {
		t.Errorf("the file and stdout differ")
	}
	for _, want := range []string{
		"Produced by `cd benchmarks && go run ./internal/loadtest/cmd/load -no-redis",
		"Redis parts skipped: -no-redis given",
		"### Targets", "### Exactness under load", "### Overhead", "### Key flood",
		"| memory | sliding_log |", "| no limiter |", "| httprate.LimitByIP |",
		"| zero sliding_log over-admissions, memory | yes |",
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("report lacks %q:\n%s", want, data)
		}
	}
}

func TestRunBadFlag(t *testing.T) {
	if err := run([]string{"-no-such-flag"}, &bytes.Buffer{}); err == nil {
		t.Error("run with an unknown flag: nil error")
	}
}
