package reload_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestUnwatchableDirectoriesLoggedInOrder: the config file is a link to a
// file under a regular file, so neither its directory nor that
// directory's parent (watched too on Linux) can be watched (not a
// directory: not a missing one to wait for). Each New logs both, the
// parent first, as follow watches the directories in the order of their
// names. It ranged over a map before: the two lines came in either
// order, and this test failed at nearly every run (20 Watchers, each
// with even odds).
func TestUnwatchableDirectoriesLoggedInOrder(t *testing.T) {
	base := t.TempDir()
	if err := os.WriteFile(filepath.Join(base, "f"), []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(base, "rk.yaml")
	if err := os.Symlink(filepath.Join(base, "f", "y", "etc", "rk.yaml"), path); err != nil {
		t.Fatal(err)
	}
	parent, dir := filepath.Join(base, "f", "y"), filepath.Join(base, "f", "y", "etc")
	for i := range 20 {
		var logs lockedBuffer
		w, err := reload.New(path, func(*policy.Config) error { return nil },
			reload.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		var dirs []string
		for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
			if !strings.Contains(line, "cannot watch a directory") {
				continue
			}
			_, d, _ := strings.Cut(line, " dir=")
			d, _, _ = strings.Cut(d, " ")
			dirs = append(dirs, d)
		}
		if len(dirs) != 2 || dirs[0] != parent || dirs[1] != dir {
			t.Fatalf("Watcher %d logged unwatchable directories %q, want %q then %q; log:\n%s", i+1, dirs, parent, dir, logs.String())
		}
	}
}
