package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestFailedRunLeavesOutputFiles: a run that fails (exit 2) leaves the
// files its flags name as they were: an existing one untouched, a new one
// not made, nothing beside them. demo --svg made the file before the demo
// and wrote the chart even when standard output failed (as it does under
// "| head", where the demo is killed part way, leaving an empty file);
// replay --cpuprofile truncated the file before the replay, and wrote the
// failed replay's profile into it.
func TestFailedRunLeavesOutputFiles(t *testing.T) {
	const old = "the user's file\n"
	for _, tc := range []struct {
		name   string
		args   func(out string) []string
		stdout func() *bytes.Buffer // nil: a failing standard output
	}{
		{"demo --svg, output failing", func(out string) []string { return []string{"demo", "--svg", out} }, nil},
		{"replay --svg, output failing", func(out string) []string {
			return []string{"replay", "--quiet", "--svg", out, "--config", "testdata/rules.yaml", "testdata/access.log"}
		}, nil},
		{"replay --svg, log missing", func(out string) []string {
			return []string{"replay", "--quiet", "--svg", out, "--config", "testdata/rules.yaml", "testdata/no-such.log"}
		}, func() *bytes.Buffer { return new(bytes.Buffer) }},
		{"replay --cpuprofile, log missing", func(out string) []string {
			return []string{"replay", "--quiet", "--cpuprofile", out, "--config", "testdata/rules.yaml", "testdata/no-such.log"}
		}, func() *bytes.Buffer { return new(bytes.Buffer) }},
		{"replay --cpuprofile, output failing", func(out string) []string {
			return []string{"replay", "--quiet", "--cpuprofile", out, "--config", "testdata/rules.yaml", "testdata/access.log"}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, exists := range []bool{true, false} {
				dir := t.TempDir()
				out := filepath.Join(dir, "out")
				if exists {
					if err := os.WriteFile(out, []byte(old), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				var stderr bytes.Buffer
				var code int
				if tc.stdout == nil {
					code = run(tc.args(out), failingWriter{}, &stderr)
				} else {
					code = run(tc.args(out), tc.stdout(), &stderr)
				}
				if code != exitUsage {
					t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr.String())
				}
				b, err := os.ReadFile(out)
				switch {
				case exists && (err != nil || string(b) != old):
					t.Errorf("the existing file now holds %d bytes (%.40q, err %v), want it untouched", len(b), b, err)
				case !exists && !os.IsNotExist(err):
					t.Errorf("the failed run made the file (%d bytes, err %v), want none", len(b), err)
				}
				ents, _ := os.ReadDir(dir)
				if want := map[bool]int{true: 1, false: 0}[exists]; len(ents) != want {
					var names []string
					for _, e := range ents {
						names = append(names, e.Name())
					}
					t.Errorf("files in the directory: %q, want %d", names, want)
				}
			}
		})
	}
}

// TestDemoFailedRunDefaultSVG: a demo without --svg that fails leaves
// no chart of its own in the temporary directory: the file it made there
// (empty) was left behind at each failed run.
func TestDemoFailedRunDefaultSVG(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var stderr bytes.Buffer
	if code := run([]string{"demo"}, failingWriter{}, &stderr); code != exitUsage {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, exitUsage, stderr.String())
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("files left in the temporary directory: %d (%s), want none", len(ents), ents[0].Name())
	}
}
