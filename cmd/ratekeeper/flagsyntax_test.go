package main

import (
	"strings"
	"testing"
)

// TestBadFlagSyntaxSaysTheForm: an argument the flag package cannot read
// as a flag (three dashes, a dash and "=") is a usage error that says how
// a flag is written, and the flag meant when there is one. It said only
// "bad flag syntax: ---config".
func TestBadFlagSyntaxSaysTheForm(t *testing.T) {
	for _, tc := range []struct {
		arg, want string
	}{
		{"---config", "bad flag syntax: ---config (a flag is --NAME, --NAME VALUE or --NAME=VALUE); did you mean --config?"},
		{"--=x", "bad flag syntax: --=x (a flag is --NAME, --NAME VALUE or --NAME=VALUE)"},
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
