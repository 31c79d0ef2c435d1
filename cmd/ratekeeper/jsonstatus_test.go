package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayJSONStatus: under count: failed, a JSON log's successes are
// not counted, by its default status field or the one --json-status names.
func TestReplayJSONStatus(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfg, []byte(`policies:
  - {name: failures, limit: 1, window: 1h, count: failed}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		field string
		flags []string
	}{
		{"status", nil},
		{"res", []string{"--json-status", "res"}},
	} {
		var log strings.Builder
		for i, code := range []string{"200", "200", "200", "401"} {
			log.WriteString(`{"time": "2024-03-10T12:00:0` + string(rune('0'+i)) + `Z", "ip": "192.0.2.1", "` + tc.field + `": ` + code + "}\n")
		}
		path := filepath.Join(dir, tc.field+".jsonl")
		if err := os.WriteFile(path, []byte(log.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		args := append([]string{"replay", "--quiet", "--config", cfg}, tc.flags...)
		out, errOut, code := runCmd(append(args, path)...)
		if code != exitOK || !strings.Contains(out, "4 requests, 0 rejected") {
			t.Errorf("field %s: exit %d, want 0 with nothing rejected (three successes and one failure, 1 failure an hour); stderr %s\n%s", tc.field, code, errOut, out)
		}
	}
}
