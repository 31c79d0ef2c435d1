package reload_test

import (
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestBackToFailedApplyIsNoRestore: a version whose apply failed (B), then
// a broken file, then B again on a file event: the rules in force are
// still A's, but the file holds B, which was never applied, so the hook is
// told B's apply error again, not "restored" with no error.
func TestBackToFailedApplyIsNoRestore(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path, a := loaded(t, config(5))
	errApply := errors.New("limit 6 refused")
	events := make(chan event, 10)
	w, err := reload.New(path, func(cfg *policy.Config) error {
		if cfg.Policies[0].Spec().Limit == 6 {
			return errApply
		}
		return nil
	}, reload.WithLogger(quiet), reload.WithDebounce(20*time.Millisecond), reload.InForce(a),
		reload.OnReload(func(cfg *policy.Config, err error) { events <- event{cfg, err} }))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	writeAtomic(t, path, config(6))
	if e := next(t, events); !errors.Is(e.err, errApply) || e.cfg != nil {
		t.Fatalf("B: %+v, want its apply error", e)
	}
	writeAtomic(t, path, "policies: [\n")
	if e := next(t, events); e.err == nil {
		t.Fatalf("broken file: %+v, want an error", e)
	}
	writeAtomic(t, path, config(6))
	if e := next(t, events); !errors.Is(e.err, errApply) || e.cfg != nil {
		t.Errorf("back to B: cfg %v, error %v; want B's apply error again (B was never applied)", e.cfg != nil, e.err)
	}
	if w.Config() != a {
		t.Error("Config() is not A's, still in force")
	}
}
