package reload_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestCheckPanicRefuses: a check that panics on a new version (a bug of
// the check: an index out of range) refuses that version, as a check
// returning an error does: nothing has been applied yet, so the rules in
// force keep running. The panic neither kills the Watcher's goroutine
// (with it the process) nor leaves Reload's caller to recover it; the
// Watcher goes on, and applies the next version the check passes.
func TestCheckPanicRefuses(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	check := reload.WithCheck(func(c *policy.Config) error {
		if c.Policies[0].Spec().Limit == 6 {
			_ = c.Policies[len(c.Policies)].Name() // a bug: one past the end
		}
		return nil
	})
	fw := newFakeWatch(t, filepath.Join(t.TempDir(), "rk.yaml"), config(5), check)
	if err := os.WriteFile(fw.path, []byte(config(6)), 0o644); err != nil {
		t.Fatal(err)
	}
	e, _ := fw.drive(t, nil)
	if e.err == nil || e.cfg != nil || !strings.HasPrefix(e.err.Error(), "reload: check "+fw.path+": the check panicked: ") ||
		!strings.Contains(e.err.Error(), "index out of range") {
		t.Fatalf("file event of a version whose check panics: OnReload(applied %v, %v), want (nil, the check's panic named)", e.cfg != nil, e.err)
	}
	if got := fw.limit.Load(); got != 5 {
		t.Errorf("limit %d in force after the panicking check, want 5", got)
	}
	if err := fw.w.Reload(); err == nil || !strings.Contains(err.Error(), "panic") {
		t.Errorf("Reload of the version whose check panics = %v, want the panic as its error", err)
	}
	if e := <-fw.events; e.err == nil {
		t.Errorf("OnReload after Reload: %v, want the panic's error", e.err)
	}
	if err := os.WriteFile(fw.path, []byte(config(7)), 0o644); err != nil {
		t.Fatal(err)
	}
	if e, _ := fw.drive(t, nil); e.err != nil || fw.limit.Load() != 7 {
		t.Errorf("next version, passing the check: %v, limit %d, want 7 applied by the Watcher", e.err, fw.limit.Load())
	}
}
