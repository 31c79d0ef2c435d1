package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ratekeeper/ratekeeper/internal/readmetest"
)

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
	const command = "`go run ./cmd/ratekeeper check ratekeeper.yaml` prints (and exits 1;"
	file := readmetest.BlockAfter(t, readme, "Every problem is reported", "yaml")
	want := readmetest.BlockAfter(t, readme, command, "")
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
