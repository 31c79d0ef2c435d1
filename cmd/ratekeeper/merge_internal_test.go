package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/replay"
)

// recorder records the entries a merger replays, in order.
type recorder struct{ paths []string }

func (r *recorder) Add(e *logparse.Entry) error {
	r.paths = append(r.paths, strings.TrimPrefix(e.Path, "/"))
	return nil
}

// mergeOrder merges the logs (each a list of "second path" lines, in
// the order given: the sources' order among equal times) and returns the
// paths in the order replayed.
func mergeOrder(t *testing.T, logs ...[]string) []string {
	t.Helper()
	dir := t.TempDir()
	var srcs []*source
	for i, lines := range logs {
		var b strings.Builder
		for _, l := range lines {
			var sec int
			var path string
			if _, err := fmt.Sscan(l, &sec, &path); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, `{"time":"2024-03-10T12:00:%02dZ","remote_addr":"203.0.113.1","method":"GET","path":%q,"status":200}`+"\n", sec, "/"+path)
		}
		name := filepath.Join(dir, fmt.Sprintf("web%d.jsonl", i))
		if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := peekSource(name, logparse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, s)
	}
	rec := &recorder{}
	var in replay.Input
	m := &merger{eng: rec, srcs: srcs, in: &in, stderr: io.Discard, progress: newProgress(io.Discard, 0, true)}
	if err := m.run(); err != nil {
		t.Fatal(err)
	}
	return rec.paths
}

// TestMergeEqualTimesInSourceOrder: entries of the same time are replayed
// in the order of their logs (the cursors' heap order), whichever log
// happened to be replaying when the tie came.
func TestMergeEqualTimesInSourceOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		logs [][]string
		want string
	}{
		{"first log current", [][]string{{"0 a0", "2 a2"}, {"1 b1", "2 b2"}}, "a0 b1 a2 b2"},
		{"second log current", [][]string{{"1 a1", "2 a2"}, {"1 b1", "2 b2", "2 b2x"}}, "a1 b1 a2 b2 b2x"},
		{"third log", [][]string{{"0 a0", "3 a3"}, {"0 b0", "3 b3"}, {"1 c1", "3 c3"}}, "a0 b0 c1 a3 b3 c3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(mergeOrder(t, tc.logs...), " "); got != tc.want {
				t.Errorf("merged order = %s, want %s", got, tc.want)
			}
		})
	}
}
