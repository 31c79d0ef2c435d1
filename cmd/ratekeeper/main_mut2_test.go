package main

import (
	"strings"
	"testing"
)

// TestHelpFlagForms: each spelling of the help flag the flag package
// takes (-h or -help, one dash or two, a value or not) prints the
// command's help on standard output, exit 0. --h and --help=true printed
// it on standard error.
func TestHelpFlagForms(t *testing.T) {
	want, _, _ := runCmd("check", "--help")
	if want == "" {
		t.Fatal("check --help printed nothing")
	}
	for _, h := range []string{"-h", "-help", "--help", "--h", "-h=true", "--help=true", "-help=1", "--h=true"} {
		out, errOut, code := runCmd("check", h)
		if code != exitOK || out != want || errOut != "" {
			t.Errorf("check %s: exit %d, stdout %q, stderr %q; want exit 0 and the help on stdout", h, code, out, errOut)
		}
	}
}

// TestHelpLookalikes: an argument that is no flag is a file name, even
// one that ends like a help flag.
func TestHelpLookalikes(t *testing.T) {
	for _, name := range []string{"xh", "a-help", "x-h=1", "h", "help"} {
		out, errOut, code := runCmd("check", name)
		if code != exitUsage || out != "" || !strings.Contains(errOut, name) {
			t.Errorf("check %s: exit %d, stdout %q, stderr %q; want exit 2 and an error naming the file %s", name, code, out, errOut, name)
		}
	}
}
