package reload_test

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestCheckRefusedThenReverted: a version the check refuses, reported,
// then reverted to the content in force is reported as restored, with
// the Config in force and a nil error, and not applied again; reverted
// within its grace, nothing is reported nor applied.
func TestCheckRefusedThenReverted(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	refuse := errors.New("limit 6 refused")
	var applies atomic.Int32
	path := filepath.Join(t.TempDir(), "rk.yaml")
	writeAtomic(t, path, config(5))
	fw := fakeWatcher(t, path, func(*policy.Config) error { applies.Add(1); return nil },
		reload.WithCheck(func(c *policy.Config) error {
			if c.Policies[0].Spec().Limit == 6 {
				return refuse
			}
			return nil
		}))
	writeAtomic(t, path, config(6))
	if e, _ := fw.drive(t, nil); !errors.Is(e.err, refuse) || e.cfg != nil {
		t.Fatalf("refused version: OnReload(applied %v, %v), want the check's error", e.cfg != nil, e.err)
	}
	writeAtomic(t, path, config(5))
	e := fw.report(t, "the revert")
	if e.err != nil || e.cfg == nil || e.cfg.Policies[0].Spec().Limit != 5 {
		t.Fatalf("reverted to the content in force: OnReload(%v, %v), want its Config, restored", e.cfg, e.err)
	}
	if n := applies.Load(); n != 0 {
		t.Errorf("apply called %d times, want none (refused, then the content in force)", n)
	}
	// Within the grace.
	writeAtomic(t, path, config(6))
	if e, reported := fw.drive(t, untilGrace); reported {
		t.Fatalf("refused version reported at once: %v, want a grace", e.err)
	}
	writeAtomic(t, path, config(5))
	fw.settle(t)
	fw.quiet(t, "the revert within the grace")
	if n := applies.Load(); n != 0 {
		t.Errorf("apply called %d times, want none", n)
	}
}

// TestCheckRefusesRetriedApplyReportedOnce: content whose apply failed,
// retried by Reload and refused this time by the check (what it checks
// against changed), is reported once, with the check's error: a touch
// of the unchanged file then reports nothing, not the old apply error
// as if the file had been put back to that content.
func TestCheckRefusesRetriedApplyReportedOnce(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	var refuseNow atomic.Bool
	refuse := errors.New("refused now")
	path := filepath.Join(t.TempDir(), "rk.yaml")
	writeAtomic(t, path, config(5))
	fw := fakeWatcher(t, path, func(*policy.Config) error { return errors.New("apply failed") },
		reload.WithCheck(func(*policy.Config) error {
			if refuseNow.Load() {
				return refuse
			}
			return nil
		}))
	if err := os.WriteFile(path, []byte(config(6)), 0o644); err != nil {
		t.Fatal(err)
	}
	if e, _ := fw.drive(t, nil); e.err == nil || errors.Is(e.err, refuse) {
		t.Fatalf("version whose apply fails: %v, want apply's error", e.err)
	}
	refuseNow.Store(true)
	if err := fw.w.Reload(); !errors.Is(err, refuse) {
		t.Fatalf("Reload retrying it = %v, want the check's refusal", err)
	}
	if e := <-fw.events; !errors.Is(e.err, refuse) {
		t.Fatalf("OnReload after Reload: %v, want the check's refusal", e.err)
	}
	fw.noRetry(t, "Reload")
	if err := os.Chmod(path, 0o600); err != nil { // an event, the same content
		t.Fatal(err)
	}
	fw.settle(t)
	if len(fw.events) > 0 {
		e := <-fw.events
		t.Fatalf("a touch of the file refused: OnReload(applied %v, %v), want nothing reported again", e.cfg != nil, e.err)
	}
	fw.noRetry(t, "the touch")
}
