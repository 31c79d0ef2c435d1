package reload_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestLinkLoop: a config path that is a loop of links (a -> b -> a) is a
// file that does not load: New returns, and Reload reports the error;
// resolving the path gives up after as many links as the kernel follows.
func TestLinkLoop(t *testing.T) {
	dir := t.TempDir()
	path, other := filepath.Join(dir, "ratekeeper.yaml"), filepath.Join(dir, "other.yaml")
	if err := os.Symlink(other, path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(path, other); err != nil {
		t.Fatal(err)
	}
	type result struct {
		w   *reload.Watcher
		err error
	}
	done := make(chan result, 1)
	go func() {
		w, err := reload.New(path, func(*policy.Config) error { return nil }, reload.WithLogger(quiet))
		done <- result{w, err}
	}()
	res := await(t, done, "New did not return (the link loop was followed for ever)")
	if res.err != nil {
		t.Fatalf("New: %v", res.err)
	}
	t.Cleanup(func() { res.w.Close() })
	if err := res.w.Reload(); err == nil {
		t.Error("Reload of a link loop = nil error")
	}
}
