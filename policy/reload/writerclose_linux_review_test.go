//go:build linux

package reload_test

import (
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

// TestWriterCloseDuringGraceWakesTheWatcher (Linux): a writer that has
// written the whole file in place and pauses, the file still open, past the
// debounce is given the grace; when it then closes the file, without
// writing again (no write event follows), the close is the file's last
// event: the file is read one debounce after it and applied, as closed,
// without the grace having to run out. Before, nothing woke the Watcher at
// the close, and the finished file waited for the end of the grace.
func TestWriterCloseDuringGraceWakesTheWatcher(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	fw := newFakeWatch(t, filepath.Join(t.TempDir(), "rk.yaml"), config(5))
	f := openInPlace(t, fw.path, inPlaceHead+inPlaceRest)
	if e, reported := fw.drive(t, untilGrace); reported {
		t.Fatalf("the file, its writer not done with it, was reported: %+v (limit %d); want it given the grace", e, limitOf(e))
	}
	held := fw.clock.Now()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if d := await(t, fw.clock.resets, "no timer set after the writer closed the file (it waits for the grace)"); d != fakeDebounce {
		t.Fatalf("the writer's close set the timer for %v, want the debounce %v", d, fakeDebounce)
	}
	if !fw.clock.advance(fakeDebounce) {
		t.Fatal("the timer the close set did not fire after the debounce")
	}
	e := await(t, fw.events, "no reload one debounce after the writer's close")
	if got := limitOf(e); got != 1000 || fw.limit.Load() != 1000 {
		t.Fatalf("after the writer closed the file: %+v (limit %d), applied %d; want the file as closed, limit 1000", e, got, fw.limit.Load())
	}
	if waited := fw.clock.Now().Sub(held); waited >= fakeGrace {
		t.Errorf("applied %v after the grace began, want before its %v ran out", waited, fakeGrace)
	}
}
