package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestFlagsSpelledWithTwoDashes: every error about a flag and every line
// of a command's help names the flag with two dashes, as the usage lines,
// README and the command's other errors do ("--config given twice"). The
// flag package's own errors and flag list use one: "flag needs an
// argument: -config", "invalid value \"abc\" for flag -reorder",
// "invalid boolean value \"maybe\" for -quiet", and "  -compare" under
// Flags:. (A flag the command does not know is quoted as typed.)
func TestFlagsSpelledWithTwoDashes(t *testing.T) {
	oneDash := regexp.MustCompile(`(^|[^-\w])-([a-z][a-z-]+)`)
	for _, tc := range []struct {
		args []string
		want string // in the first line of standard error
	}{
		{[]string{"replay", "--config"}, "--config needs an argument"},
		{[]string{"replay", "--config", "x.yaml", "--reorder"}, "--reorder needs an argument"},
		{[]string{"replay", "--reorder", "abc"}, `invalid value "abc" for --reorder: want a duration`},
		{[]string{"replay", "--top", "x"}, `invalid value "x" for --top: want a whole number`},
		{[]string{"replay", "--quiet=maybe"}, `invalid value "maybe" for --quiet: want true or false`},
		{[]string{"replay", "--json-header", "bad"}, `invalid value "bad" for --json-header: want NAME=FIELD`},
		{[]string{"demo", "--svg"}, "--svg needs an argument"},
		{[]string{"demo", "-headers"}, "--headers needs an argument"},
	} {
		_, errOut, code := runCmd(tc.args...)
		line := firstLine(errOut)
		if code != exitUsage || !strings.Contains(line, tc.want) {
			t.Errorf("%q: exit %d, %q; want %d and %q", tc.args, code, line, exitUsage, tc.want)
		}
		for _, m := range oneDash.FindAllStringSubmatch(errOut, -1) {
			t.Errorf("%q: the error names -%s with one dash:\n%s", tc.args, m[2], errOut)
		}
	}
	for _, cmd := range []string{"replay", "demo"} {
		out, _, _ := runCmd(cmd, "--help")
		_, flags, _ := strings.Cut(out, "\nFlags:\n")
		n := 0
		for _, line := range strings.Split(flags, "\n") {
			if strings.HasPrefix(line, "  -") {
				n++
				if !strings.HasPrefix(line, "  --") {
					t.Errorf("%s --help lists a flag with one dash: %q", cmd, line)
				}
			}
		}
		if n == 0 {
			t.Errorf("%s --help lists no flags:\n%s", cmd, out)
		}
	}
}
