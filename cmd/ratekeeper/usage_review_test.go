package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestUsageErrorNamedFirst: a usage error is said first, prefixed with
// the command, and followed by the usage line and where to read more, not
// by the whole help: replay's help is over 70 lines, and the error line
// above it scrolled out of sight. A bad flag value says what is wanted:
// --reorder abc said "parse error".
func TestUsageErrorNamedFirst(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string // in the first line of stderr
	}{
		{[]string{"replay", "--bogus", "--config", "testdata/rules.yaml", "testdata/access.log"}, []string{"ratekeeper replay: ", "-bogus"}},
		{[]string{"replay", "--config", "testdata/rules.yaml", "--reorder", "abc", "testdata/access.log"}, []string{"ratekeeper replay: ", "-reorder", `"abc"`, "duration"}},
		{[]string{"replay", "--config", "testdata/rules.yaml", "--top", "many", "testdata/access.log"}, []string{"ratekeeper replay: ", "-top", `"many"`, "whole number"}},
		{[]string{"replay", "--config", "testdata/rules.yaml", "--quiet=maybe", "testdata/access.log"}, []string{"ratekeeper replay: ", "-quiet", `"maybe"`, "true or false"}},
		{[]string{"replay", "--config", "testdata/rules.yaml", "--json-header", "novalue", "testdata/access.log"}, []string{"ratekeeper replay: ", "-json-header", "NAME=FIELD"}},
		{[]string{"replay", "--config"}, []string{"ratekeeper replay: ", "-config", "argument"}},
		{[]string{"replay", "--config", "testdata/rules.yaml"}, []string{"ratekeeper replay: ", "LOG"}},
		{[]string{"check"}, []string{"ratekeeper check: ", "FILE"}},
		{[]string{"check", "--bogus", "x"}, []string{"ratekeeper check: ", "-bogus"}},
		{[]string{"demo", "--bogus"}, []string{"ratekeeper demo: ", "-bogus"}},
		{[]string{"demo", "--svg"}, []string{"ratekeeper demo: ", "-svg"}},
	} {
		out, errOut, code := runCmd(tc.args...)
		if code != exitUsage || out != "" {
			t.Errorf("%q: exit %d, stdout %q; want exit 2 and nothing on stdout", tc.args, code, out)
		}
		first, _, _ := strings.Cut(errOut, "\n")
		for _, w := range tc.want {
			if !strings.Contains(first, w) {
				t.Errorf("%q: first line of stderr %q; want it to hold %q", tc.args, first, w)
			}
		}
		cmd := tc.args[0]
		if n := strings.Count(errOut, "\n"); n > 3 || !strings.Contains(errOut, "\nUsage: ratekeeper "+cmd+" ") || !strings.Contains(errOut, `"ratekeeper `+cmd+` --help"`) {
			t.Errorf("%q: stderr of %d lines:\n%s\nwant the error, the usage line and where the help is, in 3 lines", tc.args, n, errOut)
		}
	}
}

// TestUsageColumns: the general usage lists each command's synopsis, then
// at least two spaces, then what it does, in one column. The demo's
// synopsis ran into its description with one space, a column off the
// others'.
func TestUsageColumns(t *testing.T) {
	out, _, code := runCmd("help")
	if code != exitOK {
		t.Fatalf("help: exit %d", code)
	}
	line := regexp.MustCompile(`^  (ratekeeper \S+.*?)( {2,})\S`)
	col, n := -1, 0
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "  ratekeeper ") {
			continue
		}
		n++
		m := line.FindStringSubmatchIndex(l)
		if m == nil {
			t.Errorf("usage line %q: no gap of two spaces before its description", l)
			continue
		}
		if c := m[5]; col >= 0 && c != col {
			t.Errorf("usage line %q: description at column %d, want %d as above", l, c, col)
		} else {
			col = c
		}
	}
	if n != 3 {
		t.Errorf("help lists %d commands, want 3 (demo, check, replay)", n)
	}
}

// TestErrorsWithoutPackagePrefixes: an error says the command once, then
// the problem, never the name of an internal package: a bad --route read
// "ratekeeper replay: replay: --route ...", a log that is a directory
// "ratekeeper replay: logparse: ...", and an invalid configuration given
// to replay printed each problem after the first on a line of its own
// starting "policy: ".
func TestErrorsWithoutPackagePrefixes(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args  []string
		lines int // of stderr
		want  string
	}{
		{[]string{"replay", "--config", "testdata/rules.yaml", "--route", "/a/{", "testdata/access.log"}, 1, `--route "/a/{"`},
		{[]string{"replay", "--config", "testdata/rules.yaml", dir}, 1, dir},
		{[]string{"replay", "--config", "testdata/bad.yaml", "testdata/access.log"}, 3, "testdata/bad.yaml:6:5: policies[1].algoritm: unknown field"},
		{[]string{"replay", "--config", "testdata/missing.yaml", "testdata/access.log"}, 1, "testdata/missing.yaml"},
		{[]string{"check", "testdata/missing.yaml"}, 1, "testdata/missing.yaml"},
	} {
		_, errOut, code := runCmd(tc.args...)
		if code != exitUsage {
			t.Errorf("%q: exit %d, want 2", tc.args, code)
		}
		lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		if len(lines) != tc.lines || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: stderr\n%s\nwant %d line(s) naming %q", tc.args, errOut, tc.lines, tc.want)
		}
		prefix := "ratekeeper " + tc.args[0] + ": "
		for _, l := range lines {
			rest, ok := strings.CutPrefix(l, prefix)
			if !ok {
				t.Errorf("%q: stderr line %q does not start %q", tc.args, l, prefix)
			}
			for _, pkg := range []string{"replay: ", "logparse: ", "policy: "} {
				if strings.HasPrefix(rest, pkg) {
					t.Errorf("%q: stderr line %q names the package %q", tc.args, l, pkg)
				}
			}
		}
	}
}

// TestReplaySVGErrorNamesThePath: an --svg path that cannot be written is
// reported by that path, not by the name of the temporary file the chart
// is first written to (".replay.svg.1427960278", a file the user never
// named).
func TestReplaySVGErrorNamesThePath(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "no-such-dir", "replay.svg")
	_, errOut, code := runCmd("replay", "--svg", bad, "--config", "testdata/rules.yaml", "testdata/access.log")
	want := "ratekeeper replay: --svg " + bad + ": no such file or directory\n"
	if code != exitUsage || errOut != want {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, want)
	}
}
