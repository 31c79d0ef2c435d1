package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCheckTooLargeIsInputError: a configuration larger than the loader
// reads (256 KiB; a real one takes a few kilobytes) is an input error,
// exit 2 with the reason on standard error, as an unreadable file is and
// as replay --config reports it, from a file or standard input. check
// reported it as the file's one problem, on standard output, exit 1 (an
// invalid configuration). A file of exactly policy.MaxConfigSize is read
// and judged. The bound is checked as 262144 bytes on standard error, so
// that check's help ("larger than 256 KiB") stays true to it.
func TestCheckTooLargeIsInputError(t *testing.T) {
	data, err := os.ReadFile("testdata/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pad := func(size int) string {
		var b strings.Builder
		b.Write(data)
		b.WriteString("\n")
		line := "#" + strings.Repeat("x", 78) + "\n"
		for b.Len() < size {
			b.WriteString(line)
		}
		return b.String()[:size]
	}
	dir := t.TempDir()
	atBound := filepath.Join(dir, "at-bound.yaml")
	if err := os.WriteFile(atBound, []byte(pad(policy.MaxConfigSize)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runCmd("check", atBound); code != exitOK {
		t.Errorf("check of a valid file of policy.MaxConfigSize bytes: exit %d, want 0; stderr: %s", code, errOut)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(pad(policy.MaxConfigSize+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(r io.Reader) { checkStdin = r }(checkStdin)
	for _, tc := range []struct{ arg, name string }{{big, big}, {"-", "stdin"}} {
		checkStdin = strings.NewReader(pad(policy.MaxConfigSize + 1))
		out, errOut, code := runCmd("check", tc.arg)
		if code != exitUsage {
			t.Errorf("check %s (policy.MaxConfigSize + 1): exit %d, want %d", tc.arg, code, exitUsage)
		}
		if out != "" {
			t.Errorf("check %s (policy.MaxConfigSize + 1): stdout %q, want none", tc.arg, out)
		}
		if want := "ratekeeper check: " + tc.name + ": is larger than 262144 bytes"; !strings.HasPrefix(errOut, want) {
			t.Errorf("check %s (policy.MaxConfigSize + 1): stderr %q, want it to start %q", tc.arg, errOut, want)
		}
	}
}
