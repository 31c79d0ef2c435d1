package reload_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNoRetryAfterApplying: a reload that applies the file sets no timer
// of its own (only a file that does not load is looked at again, after its
// grace): the reload's timer is not set again, not even for no time, when
// the watcher's goroutine has finished with it.
func TestNoRetryAfterApplying(t *testing.T) {
	fw := newFakeWatch(t, filepath.Join(t.TempDir(), "rk.yaml"), config(5))
	if err := os.WriteFile(fw.path, []byte(config(7)), 0o644); err != nil {
		t.Fatal(err)
	}
	e, _ := fw.drive(t, nil)
	if e.err != nil || fw.limit.Load() != 7 {
		t.Fatalf("after the change: %v, limit %d, want 7 applied", e.err, fw.limit.Load())
	}
	// drive returned after the reload's tick: a retry the reload set is
	// among the resets by now (later file events set the debounce).
	for {
		select {
		case d := <-fw.clock.resets:
			if d <= 0 {
				t.Fatalf("the timer was set again for %v after the file was applied", d)
			}
		default:
			return
		}
	}
}
