package main

import (
	"strings"
	"testing"
)

// TestFormatFlag: --format takes its value in any case (JSON, CLF), and an
// unknown one is a usage error naming the flag, before any file is read.
func TestFormatFlag(t *testing.T) {
	for _, tc := range []struct{ format, log string }{
		{"JSON", "testdata/access.jsonl"}, {"Json", "testdata/access.jsonl"},
		{"CLF", "testdata/access.log"}, {"Auto", "testdata/access.log"},
		{"W3C", "internal/logparse/testdata/iis_w3c.log"},
	} {
		want, _, wantCode := runCmd("replay", "--quiet", "--config", "testdata/rules.yaml", "--format", strings.ToLower(tc.format), tc.log)
		got, errOut, code := runCmd("replay", "--quiet", "--config", "testdata/rules.yaml", "--format", tc.format, tc.log)
		if code != wantCode || got != want {
			t.Errorf("--format %s: exit %d (stderr %q), want %d and the report of --format %s", tc.format, code, errOut, wantCode, strings.ToLower(tc.format))
		}
	}
	_, errOut, code := runCmd("replay", "--config", "testdata/rules.yaml", "--format", "xml", "testdata/access.log")
	if code != exitUsage || !strings.Contains(errOut, "--format") || !strings.Contains(errOut, `"xml"`) {
		t.Errorf("--format xml: exit %d, %q; want 2 and an error naming --format and the value", code, errOut)
	}
}

// TestHelpCommand: "ratekeeper help COMMAND" prints that command's help,
// as "COMMAND --help" does, not the general usage.
func TestHelpCommand(t *testing.T) {
	for _, cmd := range []string{"check", "replay", "demo"} {
		want, _, wantCode := runCmd(cmd, "--help")
		got, errOut, code := runCmd("help", cmd)
		if code != wantCode || got != want {
			t.Errorf("help %s: exit %d, %q (stderr %q); want exit %d and %s --help's output", cmd, code, firstLine(got), errOut, wantCode, cmd)
		}
	}
	if _, errOut, code := runCmd("help", "nonsense"); code != exitUsage || !strings.Contains(errOut, "nonsense") {
		t.Errorf("help nonsense: exit %d, %q; want 2 naming the command", code, errOut)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestHelpListsNoEmptyFlags: a command's help has a "Flags:" heading only
// when there are flags under it (check has none).
func TestHelpListsNoEmptyFlags(t *testing.T) {
	for _, cmd := range []string{"check", "replay", "demo"} {
		out, _, code := runCmd(cmd, "--help")
		if code != exitOK {
			t.Fatalf("%s --help: exit %d", cmd, code)
		}
		head, flags, ok := strings.Cut(out, "\nFlags:\n")
		if cmd == "check" {
			if ok || strings.HasSuffix(strings.TrimSpace(out), "Flags:") {
				t.Errorf("check --help ends with a Flags: heading and no flags:\n%s", out)
			}
			continue
		}
		if !ok || !strings.Contains(flags, "  -") || !strings.HasPrefix(head, "Usage: ratekeeper "+cmd) {
			t.Errorf("%s --help: want its usage, then Flags: and the flags:\n%s", cmd, out)
		}
	}
}

// TestDemoHeadersFlag: --headers takes its profile in any case, as
// --format does; an unknown one is a usage error naming it.
func TestDemoHeadersFlag(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"IETF", "Draft-7", "LEGACY-UNIX"} {
		want, _, wantCode := runCmd("demo", "--headers", strings.ToLower(p), "--svg", dir+"/a.svg")
		got, errOut, code := runCmd("demo", "--headers", p, "--svg", dir+"/a.svg")
		if code != wantCode || code != exitOK || got != want {
			t.Errorf("--headers %s: exit %d (stderr %q), want %d and the output of --headers %s", p, code, errOut, wantCode, strings.ToLower(p))
		}
	}
	_, errOut, code := runCmd("demo", "--headers", "draft-99", "--svg", dir+"/c.svg")
	if code != exitUsage || !strings.Contains(errOut, `"draft-99"`) {
		t.Errorf("--headers draft-99: exit %d, %q; want 2 and an error naming the value", code, errOut)
	}
}

// TestHelpHelp: "ratekeeper help help" (or help --help) prints the general
// help on standard output and exits 0, as "ratekeeper help" does (and as
// "go help help" prints help's own).
func TestHelpHelp(t *testing.T) {
	want, _, wantCode := runCmd("help")
	for _, arg := range []string{"help", "--help", "-h"} {
		got, errOut, code := runCmd("help", arg)
		if code != exitOK || code != wantCode || got != want || errOut != "" {
			t.Errorf("help %s: exit %d, %q (stderr %q); want exit 0 and the output of help", arg, code, firstLine(got), errOut)
		}
	}
}
