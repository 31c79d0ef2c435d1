package reload_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestBrokenAtNewIsNoRestore: without InForce, New takes the file's
// content for the one in force, even one that does not load. A file
// broken another way and then put back to that content was reported as
// restored, to the hook with a nil Config and a nil error (which its doc
// never gives: a hook reading the Config's policies panicked), and logged
// as "config restored; the rules in force are unchanged". It is reported
// as what it is: a file that does not load, with the parser's error.
func TestBrokenAtNewIsNoRestore(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path := filepath.Join(t.TempDir(), "rk.yaml")
	const atNew = "policies: [" // does not load
	if err := os.WriteFile(path, []byte(atNew), 0o644); err != nil {
		t.Fatal(err)
	}
	type report struct {
		cfg *policy.Config
		err error
	}
	var reports []report
	applies := 0
	w, err := reload.New(path, func(*policy.Config) error { applies++; return nil },
		reload.WithLogger(quiet), reload.WithDebounce(time.Hour),
		reload.OnReload(func(cfg *policy.Config, err error) { reports = append(reports, report{cfg, err}) }))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := os.WriteFile(path, []byte("policies: {"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w.Reload(); err == nil {
		t.Fatal("Reload of a broken file = nil")
	}
	if err := os.WriteFile(path, []byte(atNew), 0o644); err != nil {
		t.Fatal(err)
	}
	err = w.Reload()
	if err == nil {
		t.Error("Reload of the content at New, which does not load, = nil")
	}
	for i, r := range reports {
		if r.cfg == nil && r.err == nil {
			t.Errorf("report %d: nil Config and nil error", i)
		}
	}
	if len(reports) != 2 || reports[1].err == nil || applies != 0 || w.Config() != nil {
		t.Errorf("reports %v, %d applies, Config() %v; want two errors, no apply, no Config", reports, applies, w.Config())
	}
}
