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
