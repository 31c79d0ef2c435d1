package main

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayLogsJoinedEndToEnd: the sample logs joined end to end, the
// newer first (cat access.log, then the older access.log.1.gz
// decompressed, as a glob may order rotated logs) in one file replay as
// the two logs named on the command line do: the same totals,
// per-policy rejections and keys rejected most, the older log's lines
// counted late. Before, the older log's requests were decided at their
// keys' newest instants in the newer log, piling up: 932 rejected by a
// limit instead of 187, clients that sent a request a minute among them.
func TestReplayLogsJoinedEndToEnd(t *testing.T) {
	newer, err := os.ReadFile("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("testdata/access.log.1.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	older, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	joined := filepath.Join(t.TempDir(), "joined.log")
	if err := os.WriteFile(joined, append(newer, older...), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"replay", "--quiet", "--config", "testdata/rules.yaml"}
	want, _, wantCode := runCmd(append(args, "testdata/access.log", "testdata/access.log.1.gz")...)
	got, _, code := runCmd(append(args, joined)...)
	if !strings.Contains(got, "998 requests logged out of time order") {
		t.Errorf("the older log's lines are not counted late:\n%s", got)
	}
	if g, w := decisions(got), decisions(want); code != wantCode || g != w {
		t.Errorf("logs joined end to end: exit %d, want %d; decisions\n%s\nwant, as of the logs named apart,\n%s", code, wantCode, g, w)
	}
}

// decisions returns the lines of a replay report that give its decisions:
// the totals, and each policy's name, rejections and keys rejected most.
func decisions(report string) string {
	var out []string
	for line := range strings.Lines(report) {
		for _, p := range []string{"all policies together:", "policy ", "  rejected ", "  most rejected keys:"} {
			if strings.HasPrefix(line, p) {
				out = append(out, line)
			}
		}
	}
	return strings.Join(out, "")
}
