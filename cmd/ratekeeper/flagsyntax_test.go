package main

import (
	"strings"
	"testing"
)

// TestBadFlagSyntaxSaysTheForm: an argument the flag package cannot read
// as a flag (three dashes, a dash and "=") is a usage error that says how
// a flag is written, and the flag meant when there is one. It said only
// "bad flag syntax: ---config". For a boolean flag meant, which takes no
// separate value (--quiet false is --quiet and a log named "false"), it
// says the forms that one takes; it said --NAME VALUE too.
func TestBadFlagSyntaxSaysTheForm(t *testing.T) {
	for _, tc := range []struct {
		arg, want string
	}{
		{"---config", "bad flag syntax: ---config (a flag is --NAME, --NAME VALUE or --NAME=VALUE); did you mean --config?"},
		{"--=x", "bad flag syntax: --=x (a flag is --NAME, --NAME VALUE or --NAME=VALUE)"},
		{"---quiet", "bad flag syntax: ---quiet (a boolean flag is --NAME or --NAME=true|false); did you mean --quiet?"},
		{"---json=false", "bad flag syntax: ---json=false (a boolean flag is --NAME or --NAME=true|false); did you mean --json?"},
		{"---comapre", "bad flag syntax: ---comapre (a boolean flag is --NAME or --NAME=true|false); did you mean --compare?"},
	} {
		_, errOut, code := runCmd("replay", tc.arg, "testdata/rules.yaml", "testdata/access.log")
		if got := firstLine(errOut); code != exitUsage || got != "ratekeeper replay: "+tc.want {
			t.Errorf("replay %s: exit %d, %q; want 2 and %q", tc.arg, code, got, "ratekeeper replay: "+tc.want)
		}
		if strings.Contains(tc.arg, "config") && !strings.Contains(errOut, "Usage: ratekeeper replay") {
			t.Errorf("replay %s: no usage line:\n%s", tc.arg, errOut)
		}
	}
}
