package main

import "testing"

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
