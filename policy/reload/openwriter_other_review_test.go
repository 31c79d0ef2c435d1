//go:build !linux

package reload_test

import (
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// TestInPlaceWriterOpenAppliedAfterDebounce (not Linux): the package doc
// says that elsewhere a writer pausing mid-file for longer than the
// debounce, the file still open, has what it wrote so far applied: the
// system does not tell the Watcher when a writer closes the file.
func TestInPlaceWriterOpenAppliedAfterDebounce(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	fw := newFakeWatch(t, filepath.Join(t.TempDir(), "rk.yaml"), config(5))
	f := openInPlace(t, fw.path, inPlaceHead)
	e, reported := fw.drive(t, untilGrace)
	if !reported || limitOf(e) != 1 {
		t.Fatalf("the head, open, after the debounce: %+v (reported %v); want it applied, limit 1", e, reported)
	}
	finish(t, f, inPlaceRest)
	if e, _ := fw.drive(t, nil); limitOf(e) != 1000 {
		t.Fatalf("after the writer finished: %+v, want limit 1000", e)
	}
}
