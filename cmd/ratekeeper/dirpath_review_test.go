package main

import "testing"

// TestDirectoryNamedOnce: a configuration or a log that is a directory is
// reported by its path once, as an --svg path is ("--svg DIR: is a
// directory"): check said "ratekeeper check: DIR: read DIR: is a
// directory", and replay the same of a log.
func TestDirectoryNamedOnce(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", dir}, "ratekeeper check: " + dir + ": is a directory\n"},
		{[]string{"replay", "--config", dir, "testdata/access.log"}, "ratekeeper replay: " + dir + ": is a directory\n"},
		{[]string{"replay", "--config", "testdata/rules.yaml", dir}, "ratekeeper replay: " + dir + ": is a directory\n"},
	} {
		_, errOut, code := runCmd(tc.args...)
		if code != exitUsage || errOut != tc.want {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}
