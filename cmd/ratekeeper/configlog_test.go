package main

import (
	"strings"
	"testing"
)

// TestConfigThatIsALog: an access log given where the configuration goes
// (replay's arguments swapped, or check of a log) is refused with a word
// that it is a log, and where each goes: the errors said only that the
// file was larger than 256 KiB, or not UTF-8 (a gzip log), which sent a
// new user looking at the file's size or encoding. A configuration that
// is invalid gets no such word.
func TestConfigThatIsALog(t *testing.T) {
	const hint = "is an access log, not a configuration"
	for _, args := range [][]string{
		{"replay", "--config", "testdata/access.log", "testdata/rules.yaml"},
		{"replay", "--config", "testdata/access.log.1.gz", "testdata/access.log"},
		{"replay", "--config", "testdata/access.jsonl", "testdata/access.log"},
		{"check", "testdata/access.log"},
		{"check", "testdata/access.log.1.gz"},
	} {
		_, errOut, code := runCmd(args...)
		if code == exitOK || !strings.Contains(errOut, hint) {
			t.Errorf("%q: exit %d, stderr %q; want a failure and %q", args, code, errOut, hint)
		}
	}
	for _, args := range [][]string{
		{"replay", "--config", "testdata/bad.yaml", "testdata/access.log"},
		{"check", "testdata/bad.yaml"},
	} {
		out, errOut, _ := runCmd(args...)
		if strings.Contains(out+errOut, hint) {
			t.Errorf("%q: %q; an invalid configuration is no log", args, out+errOut)
		}
	}
}
