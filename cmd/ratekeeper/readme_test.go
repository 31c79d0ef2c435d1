package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeReplay runs the README's replay command (the sample
// configuration over the sample logs, in the order the shell expands
// access.log*) and checks what the README says of it: exit status 1, the
// login policy rejecting the number of requests the README gives.
func TestReadmeReplay(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const command = "go run ./cmd/ratekeeper replay --config examples/config/ratekeeper.yaml \\\n    cmd/ratekeeper/testdata/access.log*"
	if !strings.Contains(string(readme), command) {
		t.Fatalf("README.md does not show the replay command tested here:\n%s", command)
	}
	claim := regexp.MustCompile("the `login` policy\\s+rejecting (\\d+) of their requests").FindSubmatch(readme)
	if claim == nil {
		t.Fatal("README.md does not say how many requests the login policy rejects")
	}
	logs, err := filepath.Glob("testdata/access.log*")
	if err != nil || len(logs) != 2 {
		t.Fatalf("testdata/access.log* = %v, %v; want the two sample logs", logs, err)
	}
	args := append([]string{"replay", "--quiet", "--config", "../../examples/config/ratekeeper.yaml"}, logs...)
	out, errOut, code := runCmd(args...)
	if code != exitFindings {
		t.Errorf("replay: exit %d, want %d (README: the sample logs exit 1); stderr:\n%s", code, exitFindings, errOut)
	}
	got := regexp.MustCompile(`(?m)^policy login: .*\n  requests +\d+\n  rejected +(\d+) `).FindStringSubmatch(out)
	if got == nil {
		t.Fatalf("replay reports no rejections for policy login:\n%s", out)
	}
	if got[1] != string(claim[1]) {
		t.Errorf("replay: policy login rejects %s requests; README.md says %s", got[1], claim[1])
	}
}
