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

// TestConfigFromHookAndApply: the OnReload hook and apply may ask the
// Watcher which Config is in force (a hook told of a rejected file, with a
// nil Config, logs the one still running). Config took the lock a reload
// holds while it calls apply and the hook, so either call deadlocked: the
// Reload below never returned.
func TestConfigFromHookAndApply(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path := filepath.Join(t.TempDir(), "rk.yaml")
	if err := os.WriteFile(path, []byte(config(1)), 0o644); err != nil {
		t.Fatal(err)
	}
	var w *reload.Watcher
	var inApply, inHook []*policy.Config
	fail := false
	w, err := reload.New(path, func(cfg *policy.Config) error {
		inApply = append(inApply, w.Config())
		if fail {
			return errors.New("refused")
		}
		return nil
	}, reload.WithLogger(quiet), reload.WithDebounce(time.Hour),
		reload.OnReload(func(cfg *policy.Config, err error) { inHook = append(inHook, w.Config()) }))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	reloaded := func() error {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- w.Reload() }()
		return await(t, done, "Reload did not return (deadlocked)")
	}
	if err := os.WriteFile(path, []byte(config(2)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := reloaded(); err != nil {
		t.Fatal(err)
	}
	two := w.Config()
	if two == nil || two.Policies[0].Spec().Limit != 2 {
		t.Fatalf("Config() = %v, want limit 2", two)
	}
	if len(inApply) != 1 || inApply[0] != nil || len(inHook) != 1 || inHook[0] != two {
		t.Errorf("Config() in apply %v, in the hook %v; want [nil] (none applied yet) and [the new one]", inApply, inHook)
	}

	fail = true
	if err := os.WriteFile(path, []byte(config(3)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := reloaded(); err == nil {
		t.Fatal("Reload with a failing apply = nil")
	}
	if len(inApply) != 2 || inApply[1] != two || len(inHook) != 2 || inHook[1] != two || w.Config() != two {
		t.Errorf("after a failed apply: Config() in apply %v, in the hook %v, after %v; want the one in force, limit 2", inApply, inHook, w.Config())
	}
}
