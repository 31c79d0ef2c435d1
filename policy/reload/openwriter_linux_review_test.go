//go:build linux

package reload_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestInPlaceWriterStillOpenIsHeld (Linux): a writer that pauses mid-file,
// the file still open, for longer than the debounce: what it has written so
// far loads ("limit: 1000" cut after "limit: 1"), but it is not applied:
// the Watcher saw the file written and not closed, and gives it the grace
// to be finished. The writer goes on and closes it: the whole file is the
// one version applied, at its next reload. Before, the head was applied one
// debounce after the pause began, a limit of 1 in force until the writer
// finished.
func TestInPlaceWriterStillOpenIsHeld(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	fw := newFakeWatch(t, filepath.Join(t.TempDir(), "rk.yaml"), config(5))
	f := openInPlace(t, fw.path, inPlaceHead)
	if e, reported := fw.drive(t, untilGrace); reported {
		t.Fatalf("the head, its writer still at work, was reported: %+v (limit %d); want it given the grace", e, limitOf(e))
	}
	if fw.limit.Load() != 5 {
		t.Fatalf("limit %d while the writer pauses, want 5 still in force", fw.limit.Load())
	}
	finish(t, f, inPlaceRest)
	e, reported := fw.drive(t, untilGrace)
	if !reported {
		t.Fatal("the file finished and closed was given a grace again")
	}
	if got := limitOf(e); got != 1000 || fw.limit.Load() != 1000 {
		t.Fatalf("after the writer finished: %+v (limit %d), applied %d; want limit 1000", e, got, fw.limit.Load())
	}
}

// TestInPlaceWriterOpenPastGrace (Linux): a writer that keeps the file
// open past the grace (it pauses that long, or never closes the file): what
// is there when the grace runs out is applied, not held for ever, and a
// warning says it was still open.
func TestInPlaceWriterOpenPastGrace(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path, cfg := loaded(t, config(5))
	var logs lockedBuffer
	fw := fakeWatcher(t, path, func(*policy.Config) error { return nil }, reload.InForce(cfg),
		reload.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	openInPlace(t, fw.path, inPlaceHead)
	e, _ := fw.drive(t, nil)
	if got := limitOf(e); got != 1 {
		t.Fatalf("the grace over, the file still open: %+v (limit %d); want the head applied, limit 1", e, got)
	}
	if waited := fw.clock.Now().Sub(fw.start); waited < fakeGrace {
		t.Errorf("applied after %v, want after the grace of %v", waited, fakeGrace)
	}
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "still open for writing") {
		t.Errorf("log %q, want a warning that the file applied was still open for writing", l)
	}
}

// TestWriterOfAnotherFileIsNotWaitedFor (Linux): the file's link is
// re-pointed from a file whose writer has paused mid-file, the file open, to
// a whole one: the new file's writers are not known and it is applied at
// once, not given a grace for the other file's writer.
func TestWriterOfAnotherFileIsNotWaitedFor(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	writeAtomic(t, a, config(5))
	writeAtomic(t, b, config(9))
	path := filepath.Join(dir, "rk.yaml")
	relink(t, a, path)
	fw := newFakeWatch(t, path, "")
	openInPlace(t, a, inPlaceHead)
	relink(t, b, path)
	e, reported := fw.drive(t, untilGrace)
	if !reported || limitOf(e) != 9 {
		t.Fatalf("the link re-pointed to a whole file: %+v (reported %v), want it applied at once, limit 9", e, reported)
	}
}

// inotifyInstances counts the inotify instances this process holds open.
func inotifyInstances(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot list open descriptors here: %v", err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && target == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

// TestCloseReleasesTheWriterWatch: the inotify instance that watches the
// file's writers is closed by Close, as fsnotify's is: New and Close, ten
// times over, leave no instance open.
func TestCloseReleasesTheWriterWatch(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path, cfg := loaded(t, config(5))
	before := inotifyInstances(t)
	for range 10 {
		w, err := reload.New(path, func(*policy.Config) error { return nil }, reload.WithLogger(quiet), reload.InForce(cfg))
		if err != nil {
			t.Fatal(err)
		}
		if during := inotifyInstances(t); during != before+2 {
			t.Errorf("a Watcher holds %d inotify instances, want 2 (the file's events, its writers)", during-before)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if after := inotifyInstances(t); after != before {
		t.Errorf("%d inotify instances open after ten New and Close, %d before", after, before)
	}
}

// TestNewWithoutWriterWatch: a process that can make the file watch but no
// second inotify instance (at its limit of descriptors, or of instances)
// gets a Watcher all the same, which says so in a warning and reads a
// file written in place as it is once its events stop.
func TestNewWithoutWriterWatch(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path := filepath.Join(t.TempDir(), "rk.yaml")
	writeAtomic(t, path, config(5))
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("no descriptor limit to lower here: %v", err)
	}
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	low := f.Fd()
	f.Close()
	at := lim
	at.Cur = uint64(low) + 1 // the file's watch, and no more
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &at); err != nil {
		t.Skipf("cannot lower the descriptor limit: %v", err)
	}
	var logs bytes.Buffer
	w, err := reload.New(path, func(*policy.Config) error { return nil },
		reload.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), reload.WithDebounce(time.Hour))
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Errorf("restoring the descriptor limit: %v", err)
	}
	if err != nil {
		t.Fatalf("New with one descriptor left: %v, want a Watcher without the writers' watch", err)
	}
	defer w.Close()
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "cannot watch the config file's writers") {
		t.Errorf("log %q, want a warning that the writers are not watched", logs.String())
	}
	writeAtomic(t, path, config(6))
	if err := w.Reload(); err != nil || w.Config() == nil || w.Config().Policies[0].Spec().Limit != 6 {
		t.Errorf("Reload: %v, Config %v; want the new file applied", err, w.Config())
	}
}
