package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readmeBlock returns the first fenced block of kind ("yaml", "" for a
// plain one) after the README paragraph starting with intro.
func readmeBlock(t *testing.T, readme, intro, kind string) string {
	t.Helper()
	_, after, ok := strings.Cut(readme, "\n"+intro)
	if !ok {
		t.Fatalf("README.md has no paragraph starting %q", intro)
	}
	_, after, ok = strings.Cut(after, "\n```"+kind+"\n")
	if !ok {
		t.Fatalf("README.md has no %q block after %q", kind, intro)
	}
	block, _, _ := strings.Cut(after, "```")
	return block
}

// TestReadmeCheckCommand runs the README's check command on the README's
// broken ratekeeper.yaml, as a user would: it prints exactly what the
// README shows, on standard output, and exits 1. (The root package's
// TestReadmeConfigFiles checks the problems through policy, not what the
// command prints.)
func TestReadmeCheckCommand(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	const command = "`go run ./cmd/ratekeeper check ratekeeper.yaml` prints (and exits 1):"
	file := readmeBlock(t, readme, "Every problem is reported", "yaml")
	want := readmeBlock(t, readme, command, "")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ratekeeper.yaml"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	out, errOut, code := runCmd("check", "ratekeeper.yaml")
	if code != exitFindings || errOut != "" {
		t.Errorf("check ratekeeper.yaml: exit %d, stderr %q; the README says it exits 1", code, errOut)
	}
	if out != want {
		t.Errorf("check ratekeeper.yaml printed\n%s\nthe README shows\n%s", out, want)
	}
}
