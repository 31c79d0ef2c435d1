package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSameFileReasons: a regular file given twice, as two logs or as the
// configuration and a log, is refused for what it is, without a word of
// standard input, which neither names. Both errors ended "(... standard
// input can be read once)", written for "-" and /dev/stdin, which left a
// user who typed a file name twice wondering where standard input came
// in.
func TestSameFileReasons(t *testing.T) {
	link := filepath.Join(t.TempDir(), "access.log")
	abs, err := filepath.Abs("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--config", "testdata/rules.yaml", "testdata/rules.yaml"}, "--config testdata/rules.yaml and the log testdata/rules.yaml are the same file"},
		{[]string{"--config", "testdata/rules.yaml", "testdata/access.log", "testdata/access.log"}, "testdata/access.log given twice (its requests would count twice)"},
		{[]string{"--config", "testdata/rules.yaml", "testdata/access.log", link}, link + " given twice (its requests would count twice)"},
	} {
		_, errOut, code := runCmd(append([]string{"replay", "--quiet"}, tc.args...)...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "standard input") {
			t.Errorf("replay %q: exit %d, stderr %q; want 2, %q and no word of standard input", tc.args, code, errOut, tc.want)
		}
	}
}
