package reload_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestEmptyFileAfterMissing: a file missing at New and then made empty
// is a file that does not load (an empty document), not content
// unchanged since New: Reload reports it.
func TestEmptyFileAfterMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ratekeeper.yaml")
	w, err := reload.New(path, func(*policy.Config) error { return nil }, reload.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w.Reload(); err == nil {
		t.Error("Reload of an empty file, missing at New = nil error")
	}
}
