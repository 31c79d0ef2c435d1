package reload_test

import (
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestCloseWaitsForCheck: Close called while the Watcher's goroutine runs
// the check of a new version waits for that reload to end (the check,
// then apply and the hook); once Close has returned, apply has run and
// nothing of the Watcher's runs any more.
func TestCloseWaitsForCheck(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path, cfg := loaded(t, config(5))
	clock := newFakeClock()
	entered, release := make(chan struct{}), make(chan struct{})
	var applied, reported atomic.Bool
	w, err := reload.New(path, func(*policy.Config) error { applied.Store(true); return nil },
		reload.WithLogger(quiet), reload.InForce(cfg), reload.WithDebounce(fakeDebounce), reload.WithClock(clock),
		reload.WithCheck(func(*policy.Config) error {
			close(entered)
			<-release
			return nil
		}),
		reload.OnReload(func(*policy.Config, error) { reported.Store(true) }))
	if err != nil {
		t.Fatal(err)
	}
	writeAtomic(t, path, config(7))
	clock.advance(await(t, clock.resets, "no event"))
	await(t, entered, "no check")
	closeDuringReload(t, w, release, "the check")
	if !applied.Load() || !reported.Load() || w.Config().Policies[0].Spec().Limit != 7 {
		t.Errorf("after Close: applied %v, reported %v, Config limit %d; want the version checked applied and reported before Close returned",
			applied.Load(), reported.Load(), w.Config().Policies[0].Spec().Limit)
	}
}
