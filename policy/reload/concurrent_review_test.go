package reload_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestConcurrentReloads: goroutines that each save new versions of the
// file (renaming a file of their own over it) and call Reload, while the
// Watcher's goroutine reloads on the events: apply never runs twice at
// once, the hook reports every version applied in the order applied
// (nothing else: every version loads), Config is never nil and is the
// version applied last, the version saved last is in force after a last
// Reload, and Close leaves no goroutine. Run under -race.
func TestConcurrentReloads(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path, cfg := loaded(t, config(1))
	var inApply, overlaps atomic.Int64
	var mu sync.Mutex
	var applied, reported []int64
	w, err := reload.New(path, func(c *policy.Config) error {
		if inApply.Add(1) != 1 {
			overlaps.Add(1)
		}
		defer inApply.Add(-1)
		mu.Lock()
		applied = append(applied, c.Policies[0].Spec().Limit)
		mu.Unlock()
		return nil
	}, reload.WithLogger(quiet), reload.InForce(cfg), reload.WithDebounce(time.Millisecond), reload.WithGrace(time.Millisecond),
		reload.OnReload(func(c *policy.Config, err error) {
			if err != nil {
				t.Errorf("OnReload: %v, want every version applied", err)
				return
			}
			mu.Lock()
			reported = append(reported, c.Policies[0].Spec().Limit)
			mu.Unlock()
		}))
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 4, 50
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			mine := filepath.Join(filepath.Dir(path), fmt.Sprintf("new%d~", g))
			for i := range each {
				if err := os.WriteFile(mine, []byte(config(2+g*each+i)), 0o644); err != nil {
					t.Error(err)
					return
				}
				if err := os.Rename(mine, path); err != nil {
					t.Error(err)
					return
				}
				if err := w.Reload(); err != nil {
					t.Errorf("Reload: %v", err)
				}
				if w.Config() == nil {
					t.Error("Config() = nil")
				}
			}
		})
	}
	wg.Wait()
	writeAtomic(t, path, config(9999))
	if err := w.Reload(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if overlaps.Load() != 0 {
		t.Errorf("%d applies ran while another did", overlaps.Load())
	}
	if !slices.Equal(applied, reported) {
		t.Errorf("applied %v,\nreported %v; want the same, in order", applied, reported)
	}
	if got := w.Config().Policies[0].Spec().Limit; len(applied) == 0 || applied[len(applied)-1] != 9999 || got != 9999 {
		t.Errorf("last applied %v, Config limit %d; want 9999, the version saved last", applied[max(0, len(applied)-1):], got)
	}
}
