package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplaySameLogTwoNames: one log named twice, in two spellings or
// through a link (access.log and ./access.log; a glob and a path), would
// replay its requests twice and double every count. The command refuses a
// log given twice (exit 2); it compared the names only.
func TestReplaySameLogTwoNames(t *testing.T) {
	dir := t.TempDir()
	abs, err := filepath.Abs("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "access.log")
	if err := os.Symlink(abs, link); err != nil {
		t.Fatal(err)
	}
	for _, logs := range [][]string{
		{"testdata/access.log", "./testdata/access.log"},
		{"testdata/access.log", abs},
		{link, "testdata/access.log"},
	} {
		args := append([]string{"replay", "--quiet", "--config", "testdata/rules.yaml"}, logs...)
		_, errOut, code := runCmd(args...)
		if code != exitUsage || !strings.Contains(errOut, "given twice") {
			t.Errorf("replay %q: exit %d, stderr %q; want %d, the log given twice", logs, code, errOut, exitUsage)
		}
	}
}
