package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestControlCharactersInFileNames: a log whose name holds a control
// character (ESC, from a glob over a directory others write to) is named
// in the report and the warnings with it escaped, as the report's keys
// and sampled lines are, never raw: "\x1b[2J" would clear the terminal
// the report is read on. The report wrote names as they are.
func TestControlCharactersInFileNames(t *testing.T) {
	data, err := os.ReadFile("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	// A malformed line (sampled, with its file's name) and a gzip cut
	// short (a warning naming the file) are made below.
	name := filepath.Join(t.TempDir(), "a\x1b[2Jb.log")
	if err := os.WriteFile(name, append([]byte("GARBAGE\n"), data...), 0o644); err != nil {
		t.Fatal(err)
	}
	gz, err := os.ReadFile("testdata/access.log.1.gz")
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(filepath.Dir(name), "c\x07d.log.gz")
	if err := os.WriteFile(cut, gz[:len(gz)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"replay", "--config", "testdata/rules.yaml", name, cut},
		{"replay", "--json", "--config", "testdata/rules.yaml", name, cut},
	} {
		out, errOut, code := runCmd(args...)
		if code == exitUsage {
			t.Fatalf("%q: exit %d; stderr %q", args, code, errOut)
		}
		for _, s := range []string{out, errOut} {
			if strings.ContainsAny(s, "\x1b\x07") {
				t.Errorf("%q writes a control character raw:\n%q", args[:2], s)
			}
		}
		if !strings.Contains(out, `\x1b[2Jb.log`) && !strings.Contains(out, `\u001b[2Jb.log`) {
			t.Errorf("%q: the report does not name the log, escaped:\n%.600s", args[:2], out)
		}
	}
}
