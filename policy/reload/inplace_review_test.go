package reload_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// A file written in place in two parts, head then rest: head alone loads,
// with a limit of 1 where the whole file says 1000.
const (
	inPlaceHead = "policies:\n  - name: p0\n    window: 1h\n    algorithm: fixed_window\n    limit: 1"
	inPlaceRest = "000\n"
)

// openInPlace truncates the file at path and writes head in it, as a
// program writing the file in place does before it writes the rest; the
// file stays open for the rest.
func openInPlace(t *testing.T, path, head string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if _, err := f.WriteString(head); err != nil {
		t.Fatal(err)
	}
	return f
}

// finish writes rest after what f holds and closes it.
func finish(t *testing.T, f *os.File, rest string) {
	t.Helper()
	if _, err := f.WriteString(rest); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// limitOf returns the first policy's limit of a reload event, or -1.
func limitOf(e event) int64 {
	if e.err != nil || e.cfg == nil || len(e.cfg.Policies) == 0 {
		return -1
	}
	return e.cfg.Policies[0].Spec().Limit
}

// TestInPlacePauseShorterThanDebounce: a writer that pauses mid-file for
// less than the debounce is not read before it has finished: the whole
// file is the one version applied (the package doc: an in-place write is
// read once no event has come for the debounce).
func TestInPlacePauseShorterThanDebounce(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	fw := newFakeWatch(t, filepath.Join(t.TempDir(), "rk.yaml"), config(5))
	f := openInPlace(t, fw.path, inPlaceHead)
	if d := await(t, fw.clock.resets, "no event for the head"); d != fakeDebounce {
		t.Fatalf("the head's event set the timer for %v, want the debounce %v", d, fakeDebounce)
	}
	if fw.clock.advance(fakeDebounce - 1) {
		<-fw.ticks
		t.Fatal("the timer fired before the debounce was over")
	}
	finish(t, f, inPlaceRest)
	e, _ := fw.drive(t, nil)
	if got := limitOf(e); got != 1000 || fw.limit.Load() != 1000 {
		t.Fatalf("first reload: %+v (limit %d), applied %d; want the whole file, limit 1000", e, got, fw.limit.Load())
	}
}

// TestInPlaceClosedBetweenPartsAppliesTheHead pins what the package doc
// says a Watcher cannot tell: a writer that closes the file after a part
// (a shell's "> file", then ">> file" later) and goes on after more than
// the debounce, what it has written so far a valid configuration, has that
// part applied (here "limit: 1000" cut after "limit: 1"); the whole file is
// applied when the writer finishes. No grace is given: the head loads, and
// no writer has it open.
func TestInPlaceClosedBetweenPartsAppliesTheHead(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	fw := newFakeWatch(t, filepath.Join(t.TempDir(), "rk.yaml"), config(5))
	if err := openInPlace(t, fw.path, inPlaceHead).Close(); err != nil {
		t.Fatal(err)
	}
	e, reported := fw.drive(t, untilGrace)
	if !reported {
		t.Fatal("the head, which loads and is closed, was given a grace")
	}
	if got := limitOf(e); got != 1 || fw.limit.Load() != 1 {
		t.Fatalf("after a pause past the debounce: %+v (limit %d), applied %d; want the head applied, limit 1", e, got, fw.limit.Load())
	}
	f, err := os.OpenFile(fw.path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	finish(t, f, inPlaceRest)
	if e, _ := fw.drive(t, nil); limitOf(e) != 1000 || fw.limit.Load() != 1000 {
		t.Fatalf("after the writer finished: %+v, applied %d; want limit 1000", e, fw.limit.Load())
	}
}

// TestRenamedIntoPlaceNeverHalf: the way the package doc gives to write
// the file safely, a new file written in the same directory (in parts,
// with any pause) and renamed over it: the Watcher never reads the new
// file half written; the rename applies the whole of it, in one reload.
func TestRenamedIntoPlaceNeverHalf(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	fw := newFakeWatch(t, filepath.Join(t.TempDir(), "rk.yaml"), config(5))
	tmp := fw.path + ".new"
	if err := os.WriteFile(tmp, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f := openInPlace(t, tmp, inPlaceHead)
	// The pause: whatever the Watcher reads meanwhile is the file in force.
	if err := fw.w.Reload(); err != nil {
		t.Fatal(err)
	}
	if fw.clock.advance(100 * fakeDebounce) {
		<-fw.ticks
	}
	finish(t, f, inPlaceRest)
	if err := os.Rename(tmp, fw.path); err != nil {
		t.Fatal(err)
	}
	e, _ := fw.drive(t, nil)
	if got := limitOf(e); got != 1000 || fw.limit.Load() != 1000 {
		t.Fatalf("first report: %+v (limit %d), applied %d; want the renamed file, limit 1000", e, got, fw.limit.Load())
	}
}

// TestReloadReadsAHalfWrittenFileAsItIs: Reload (SIGHUP) reads the file
// when it is called, with no debounce, as the package doc says: a file
// written in place, paused after a head that loads, has that head applied.
func TestReloadReadsAHalfWrittenFileAsItIs(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path, cfg := loaded(t, config(5))
	var applied []int64
	w, err := reload.New(path, func(c *policy.Config) error {
		applied = append(applied, c.Policies[0].Spec().Limit)
		return nil
	}, reload.WithLogger(quiet), reload.InForce(cfg), reload.WithDebounce(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f := openInPlace(t, path, inPlaceHead)
	if err := w.Reload(); err != nil {
		t.Fatal(err)
	}
	finish(t, f, inPlaceRest)
	if err := w.Reload(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(applied) != "[1 1000]" {
		t.Errorf("applied %v, want [1 1000]: the head, then the whole file", applied)
	}
}
