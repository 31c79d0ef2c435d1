//go:build unix

package reload_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// within runs f and fails the test if it has not returned within wait: a
// guard against a hang (the test fails instead of the run timing out), not
// a wait that makes it pass.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	hangguard.Run(t, wait, what+" did not return", f)
}

// TestNamedPipeIsRefused: a configuration path that is (or becomes) a
// named pipe with no writer blocked the Watcher's read forever, in New
// or in a reload, and Close then waited for it. A path that is not a
// regular file is now refused as such, at once.
func TestNamedPipeIsRefused(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := t.TempDir()
	path := filepath.Join(dir, "rk.yaml")
	if err := os.WriteFile(path, []byte(config(1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := policy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var w *reload.Watcher
	within(t, "New", func() {
		w, err = reload.New(path, func(*policy.Config) error { return nil },
			reload.WithLogger(quiet), reload.WithDebounce(time.Hour), reload.InForce(cfg))
	})
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	if err := os.Rename(fifo, path); err != nil {
		t.Fatal(err)
	}
	var rerr error
	within(t, "Reload of a named pipe", func() { rerr = w.Reload() })
	if rerr == nil || !strings.Contains(rerr.Error(), "not a regular file") {
		t.Errorf("Reload of a named pipe = %v, want an error saying it is not a regular file", rerr)
	}
	if w.Config() != cfg {
		t.Error("the Config in force changed")
	}
	within(t, "Close", func() { w.Close() })

	// New on a path that is a named pipe.
	var w2 *reload.Watcher
	within(t, "New on a named pipe", func() {
		w2, err = reload.New(path, func(*policy.Config) error { return nil },
			reload.WithLogger(quiet), reload.WithDebounce(time.Hour))
	})
	if err != nil {
		t.Fatal(err)
	}
	within(t, "Reload of a named pipe", func() { rerr = w2.Reload() })
	if rerr == nil || !strings.Contains(rerr.Error(), "not a regular file") {
		t.Errorf("Reload of a named pipe = %v, want an error saying it is not a regular file", rerr)
	}
	within(t, "Close", func() { w2.Close() })
}
