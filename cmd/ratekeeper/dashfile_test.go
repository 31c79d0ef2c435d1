package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputFlagDashIsNoFile: "-" given for an output file (demo --svg,
// replay --svg and --cpuprofile) is a usage error naming the flag, as
// check's "-" reads standard input: before, each wrote a file named "-"
// in the working directory (demo --svg - printed "Chart ...: -"), where a
// user who meant standard output found nothing.
func TestOutputFlagDashIsNoFile(t *testing.T) {
	config, err := filepath.Abs("testdata/rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	log, err := filepath.Abs("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	for _, args := range [][]string{
		{"demo", "--svg", "-"},
		{"demo", "--svg=-"},
		{"replay", "--quiet", "--svg", "-", "--config", config, log},
		{"replay", "--quiet", "--cpuprofile", "-", "--config", config, log},
	} {
		flag := args[1]
		if args[0] == "replay" {
			flag = args[2]
		}
		flag, _, _ = strings.Cut(flag, "=")
		_, errOut, code := runCmd(args...)
		if code != exitUsage || !strings.Contains(errOut, flag+" -:") || !strings.Contains(errOut, "/dev/stdout") {
			t.Errorf("%q: exit %d, stderr %q; want %d and an error naming %s - and /dev/stdout", args, code, errOut, exitUsage, flag)
		}
		if _, err := os.Stat("-"); err == nil {
			t.Errorf("%q wrote a file named \"-\"", args)
			os.Remove("-")
		}
	}
}
