package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayMalformedSamplesAcrossLogs: the report gives the first five
// malformed lines of all the logs together, not five per log.
func TestReplayMalformedSamplesAcrossLogs(t *testing.T) {
	dir := t.TempDir()
	var logs []string
	for i, name := range []string{"a.log", "b.log"} {
		var b strings.Builder
		b.WriteString("203.0.113.1 - - [10/Mar/2024:12:00:0" + string(rune('0'+i)) + " +0000] \"GET / HTTP/1.1\" 200 1 \"-\" \"-\"\n")
		for j := range 4 {
			b.WriteString("garbage " + name + " " + string(rune('0'+j)) + "\n")
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		logs = append(logs, path)
	}
	out, errOut, code := runCmd(append([]string{"replay", "--quiet", "--config", "testdata/rules.yaml"}, logs...)...)
	if code == exitUsage {
		t.Fatalf("replay: exit %d; stderr: %s", code, errOut)
	}
	if n := strings.Count(out, `"garbage `); n != 5 || !strings.Contains(out, "8 malformed lines") {
		t.Errorf("report gives %d malformed samples, want 5 of the 8 lines:\n%s", n, out)
	}
}
