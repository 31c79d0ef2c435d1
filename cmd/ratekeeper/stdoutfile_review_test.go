package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSVGToRedirectedStdout: --svg /dev/stdout (the name the error for
// --svg - suggests) with standard output redirected to a file resolves to
// that regular file, and the chart was written beside it and renamed over
// it: the report, written to standard output before, went to the file
// replaced, and "ratekeeper replay ... --svg /dev/stdout >> runs.txt"
// destroyed what runs.txt held. A target that is the file standard output
// (or error) goes to is written through it, after what it holds.
func TestSVGToRedirectedStdout(t *testing.T) {
	runs := filepath.Join(t.TempDir(), "runs.txt")
	if err := os.WriteFile(runs, []byte("an earlier run\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range []string{
		"replay --quiet --svg /dev/stdout --config testdata/rules.yaml testdata/access.log",
		"demo --svg /dev/stdout",
	} {
		out, err := os.OpenFile(runs, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestMainProcess$")
		cmd.Env = append(os.Environ(), mainArgsEnv+"="+args)
		cmd.Stdout = out
		var errOut strings.Builder
		cmd.Stderr = &errOut
		err = cmd.Run()
		out.Close()
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == exitUsage || err != nil && !ok {
			t.Fatalf("ratekeeper %s: %v; stderr:\n%s", args, err, errOut.String())
		}
	}
	b, err := os.ReadFile(runs)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	// In order: the earlier run, the replay's report, its chart, the
	// demo's output and its chart.
	at := 0
	for _, want := range []string{"an earlier run\n", "replayed ", "<svg", "</svg>", "chart: /dev/stdout", "1. ", "<svg", "</svg>"} {
		i := strings.Index(got[at:], want)
		if i < 0 {
			t.Fatalf("%s holds no %q after byte %d:\n%.300s...", runs, want, at, got)
		}
		at += i + len(want)
	}
}
