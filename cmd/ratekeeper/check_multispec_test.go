package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// multiSpec is a policy whose Spec has three problems, each at its field.
const multiSpec = "  - {name: p%d, algorithm: token_bucket, limit: 2000000000, window: 48h, burst: -1}\n"

// problemLine is a problem as check prints it: file:line:column: field: reason.
var problemLine = regexp.MustCompile(`^[^:]+\.yaml:\d+:\d+: policies\[\d+\]\.(limit|window|burst): \S`)

// TestCheckEverySpecProblemOnItsLine: a policy whose Spec breaks several
// rules (Validate joins them) is reported by check one problem per line,
// each with its position and field, in the order of the file and of the
// Spec's fields, the same every run; the problems are counted by line,
// and the loader's bound of 20 falls within a policy's problems: 7
// policies of 3 are "more than 20", 20 listed.
func TestCheckEverySpecProblemOnItsLine(t *testing.T) {
	write := func(n int) string {
		var b strings.Builder
		b.WriteString("policies:\n")
		for i := range n {
			fmt.Fprintf(&b, multiSpec, i)
		}
		path := filepath.Join(t.TempDir(), "multi.yaml")
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	path := write(1)
	out, errOut, code := runCmd("check", path)
	want := fmt.Sprintf("%[1]s:2:48: policies[0].limit: must be at most 1000000000, got 2000000000\n"+
		"%[1]s:2:68: policies[0].window: must be at most 24h0m0s, got 48h0m0s\n"+
		"%[1]s:2:80: policies[0].burst: must be at least 1 (or 0 for the limit), got -1\n"+
		"%[1]s: 3 problems\n", path)
	if out != want || errOut != "" || code != exitFindings {
		t.Errorf("check of one policy with three problems: exit %d, stdout\n%s\nstderr %q; want exit %d, stdout\n%s", code, out, errOut, exitFindings, want)
	}

	for _, c := range []struct {
		policies int
		summary  string
		listed   int
	}{
		{6, "18 problems", 18},
		{7, "more than 20 problems; the first 20 are listed above", 20},
	} {
		path := write(c.policies)
		out, _, code := runCmd("check", path)
		again, _, _ := runCmd("check", path)
		if out != again {
			t.Errorf("%d policies: two runs printed\n%s\nand\n%s", c.policies, out, again)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if got, want := lines[len(lines)-1], path+": "+c.summary; got != want || code != exitFindings {
			t.Errorf("%d policies: exit %d, last line %q; want %d, %q", c.policies, code, got, exitFindings, want)
		}
		listed := lines[:len(lines)-1]
		for _, l := range listed {
			if !problemLine.MatchString(l) {
				t.Errorf("%d policies: line %q is not a problem with its position and field", c.policies, l)
			}
		}
		if len(listed) != c.listed {
			t.Errorf("%d policies: %d lines listed, want %d", c.policies, len(listed), c.listed)
		}
	}
}

// TestReplayEverySpecProblemOnItsLine: replay --config reports a file's
// problems as check does, each line its own "ratekeeper replay:" error
// with its position.
func TestReplayEverySpecProblemOnItsLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "multi.yaml")
	if err := os.WriteFile(path, []byte("policies:\n"+fmt.Sprintf(multiSpec, 0)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runCmd("replay", "--config", path, "testdata/access.log")
	want := fmt.Sprintf("ratekeeper replay: %[1]s:2:48: policies[0].limit: must be at most 1000000000, got 2000000000\n"+
		"ratekeeper replay: %[1]s:2:68: policies[0].window: must be at most 24h0m0s, got 48h0m0s\n"+
		"ratekeeper replay: %[1]s:2:80: policies[0].burst: must be at least 1 (or 0 for the limit), got -1\n", path)
	if errOut != want || code != exitUsage {
		t.Errorf("replay --config with three problems: exit %d, stderr\n%s\nwant exit %d, stderr\n%s", code, errOut, exitUsage, want)
	}
}
