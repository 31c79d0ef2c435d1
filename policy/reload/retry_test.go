package reload_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestReloadRetriesFailedApply: when apply fails (say a configuration
// service is briefly unreachable), the content was not applied; Reload
// (SIGHUP: "reloads on demand") must call apply again for it, as its doc
// says ("if its content changed since the last version applied"). It
// returned nil without calling apply, so the new rules never came in until
// the file changed again. Watching alone does not retry (a chmod or a
// touch raises events): only an explicit Reload does.
func TestReloadRetriesFailedApply(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path := filepath.Join(t.TempDir(), "rk.yaml")
	if err := os.WriteFile(path, []byte(config(1)), 0o644); err != nil {
		t.Fatal(err)
	}
	fail := true
	var applied []int64
	w, err := reload.New(path, func(cfg *policy.Config) error {
		if fail {
			return errors.New("config service unreachable")
		}
		applied = append(applied, cfg.Policies[0].Spec().Limit)
		return nil
	}, reload.WithLogger(quiet), reload.WithDebounce(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := os.WriteFile(path, []byte(config(2)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w.Reload(); err == nil {
		t.Fatal("Reload with a failing apply = nil")
	}
	fail = false
	if err := w.Reload(); err != nil {
		t.Fatal(err)
	}
	if len(applied) != 1 || applied[0] != 2 {
		t.Errorf("applied %v after a retry, want [2]", applied)
	}
	if cfg := w.Config(); cfg == nil || cfg.Policies[0].Spec().Limit != 2 {
		t.Errorf("Config() = %v after the retry, want the file's", cfg)
	}
	// Applied now: another Reload of the same content does nothing.
	if err := w.Reload(); err != nil || len(applied) != 1 {
		t.Errorf("Reload of applied content: %v, applied %v", err, applied)
	}
}
