package main

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/demo"
)

// TestDemoBadInputSaysWhatIsWanted: a new user's slips on demo are
// answered with what it wants, as replay's --format is: an unknown header
// profile with the profiles, an argument with the argument given.
func TestDemoBadInputSaysWhatIsWanted(t *testing.T) {
	var profiles []string
	for name := range demo.Profiles {
		profiles = append(profiles, name)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"demo", "--headers", "draft-99"}, append([]string{`"draft-99"`}, profiles...)},
		{[]string{"demo", "--headers", ""}, append([]string{`""`}, profiles...)},
		{[]string{"demo", "demo"}, []string{`"demo"`}},
	} {
		_, errOut, code := runCmd(tc.args...)
		if code != exitUsage {
			t.Errorf("ratekeeper %q: exit %d, want %d", tc.args, code, exitUsage)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("ratekeeper %q: stderr %q does not say %s", tc.args, errOut, w)
			}
		}
	}
}

// TestHelpFitsATerminal: the prose of every --help fits an 80-column
// terminal, which would otherwise break its lines mid-word. The flag
// descriptions, one line each as package flag prints them (indented by a
// tab), are left to wrap.
func TestHelpFitsATerminal(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"demo", "--help"}, {"check", "--help"}, {"replay", "--help"}} {
		out, _, _ := runCmd(args...)
		if out == "" {
			t.Fatalf("ratekeeper %q printed nothing", args)
		}
		for i, line := range strings.Split(out, "\n") {
			if !strings.HasPrefix(line, "    \t") && len([]rune(line)) >= 80 {
				t.Errorf("ratekeeper %q, line %d: %d columns, want fewer than 80:\n%s", args, i+1, len([]rune(line)), line)
			}
		}
	}
}
