package reload_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// unprivilegedEnv tells the test binary run again by runUnprivileged
// that it runs without privileges.
const unprivilegedEnv = "RATEKEEPER_RELOAD_TEST_UNPRIVILEGED"

// runUnprivileged runs f, the body of the top-level test t, without
// privileges: at once when t runs so, else (root reads every file and
// directory) in the test binary run again as another user, in a user
// namespace of its own. t is skipped where none can be made.
func runUnprivileged(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	if os.Getenv(unprivilegedEnv) != "" || os.Geteuid() != 0 {
		f(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), unprivilegedEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 1, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 1, HostID: os.Getgid(), Size: 1}},
		Credential:  &syscall.Credential{Uid: 1, Gid: 1, NoSetGroups: true},
	}
	out, err := cmd.CombinedOutput()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Skipf("cannot run the test unprivileged in a user namespace of its own: %v", err)
	}
	if err != nil {
		t.Fatalf("unprivileged: %v\n%s", err, out)
	}
	if bytes.Contains(out, []byte("--- SKIP")) {
		t.Skipf("skipped unprivileged:\n%s", out)
	}
}

// TestDirectoryNoLongerReadable: the config file's directory, once
// watched, loses its read permission for the Watcher's user (chmod 311:
// it may still go through it and read the file). inotify cannot watch it
// again, but its watch goes on working; the Watcher, failing to add it
// again at the next reload, removed it, and a new file renamed over the
// old one was never applied (no reload within 20s).
func TestDirectoryNoLongerReadable(t *testing.T) { runUnprivileged(t, noLongerReadable) }

// noLongerReadable is TestDirectoryNoLongerReadable's run without
// privileges.
func noLongerReadable(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf")
	path := writeIn(t, dir, "rk.yaml", 5)
	t.Cleanup(func() { os.Chmod(dir, 0o755) }) // before the TempDir's removal
	cfg, err := policy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan event, 10)
	ticks := make(chan struct{}, 10)
	w, err := reload.New(path, func(*policy.Config) error { return nil }, reload.InForce(cfg),
		reload.WithLogger(quiet), reload.WithDebounce(20*time.Millisecond), reload.AfterTimer(func() { ticks <- struct{}{} }),
		reload.OnReload(func(cfg *policy.Config, err error) { events <- event{cfg, err} }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if err := os.Chmod(dir, 0o311); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadDir(dir); !errors.Is(err, fs.ErrPermission) {
		t.Skipf("ReadDir of a directory of mode 0311 = %v: privileged", err)
	}
	await(t, ticks, "no reload after the chmod") // it changed nothing
	writeAtomic(t, path, config(7))
	if e := next(t, events); e.err != nil || e.cfg.Policies[0].Spec().Limit != 7 {
		t.Fatalf("renamed over the file: %+v, want the limit 7 applied", e)
	}
}

// TestFileNoLongerReadable: the config file, bind-mounted into a
// container and written in place on the host (a hard link here, as in
// TestWriteThroughAnotherName), is written there while its mode lets its
// owner write it but not read it (0200), then made readable and written
// again. inotify cannot watch a file its user may not read, but a watch
// of it goes on working; the Watcher, failing to add it again at the
// reload of the first write, dropped it, and saw no later write through
// the host's name: the readable file was never applied (no reload and no
// timer set within 20s).
func TestFileNoLongerReadable(t *testing.T) { runUnprivileged(t, fileNoLongerReadable) }

// fileNoLongerReadable is TestFileNoLongerReadable's run without
// privileges.
func fileNoLongerReadable(t *testing.T) {
	path, host := linkedConfig(t)
	fw := newFakeWatch(t, path, "")
	if err := os.Chmod(host, 0o200); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadFile(host); !errors.Is(err, fs.ErrPermission) {
		t.Skipf("ReadFile of a file of mode 0200 = %v: privileged", err)
	}
	if err := os.WriteFile(host, []byte(config(6)), 0); err != nil {
		t.Fatal(err)
	}
	if e, _ := fw.drive(t, nil); !errors.Is(e.err, fs.ErrPermission) {
		t.Fatalf("written, not readable: %+v, want it reported unreadable", e)
	}
	if err := os.Chmod(host, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(host, []byte(config(7)), 0); err != nil {
		t.Fatal(err)
	}
	if e, _ := fw.drive(t, nil); e.err != nil || fw.limit.Load() != 7 {
		t.Fatalf("made readable and written again: %v, limit %d, want 7 applied", e.err, fw.limit.Load())
	}
}

// TestWriterHeldWhenDirectoryNoLongerReadable: a file written in place,
// its writer paused mid-file with the file open, is held; meanwhile its
// directory loses its read permission for the Watcher's user (chmod
// 311), which raises an event. The writers' watch of the directory cannot
// be added again but goes on working; the Watcher dropped it, took the
// file for closed, and applied the head ("limit: 1" of "limit: 1000") one
// debounce after the chmod.
func TestWriterHeldWhenDirectoryNoLongerReadable(t *testing.T) {
	runUnprivileged(t, writerHeldUnreadableDirectory)
}

// writerHeldUnreadableDirectory is
// TestWriterHeldWhenDirectoryNoLongerReadable's run without privileges.
func writerHeldUnreadableDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conf")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) }) // before the TempDir's removal
	fw := newFakeWatch(t, filepath.Join(dir, "rk.yaml"), config(5))
	f := openInPlace(t, fw.path, inPlaceHead)
	if e, reported := fw.drive(t, untilGrace); reported {
		t.Fatalf("the head, its writer still at work, was reported: %+v (limit %d); want it given the grace", e, limitOf(e))
	}
	if err := os.Chmod(dir, 0o311); err != nil {
		t.Fatal(err)
	}
	if _, err := os.ReadDir(dir); !errors.Is(err, fs.ErrPermission) {
		t.Skipf("ReadDir of a directory of mode 0311 = %v: privileged", err)
	}
	// The chmod's event: the file is read one debounce later, and held
	// again for what is left of the grace.
	if e, reported := fw.drive(t, func(d time.Duration) bool { return d != fakeDebounce }); reported {
		t.Fatalf("after the directory's chmod, the head, its writer still at work, was reported: %+v (limit %d); want it held", e, limitOf(e))
	}
	finish(t, f, inPlaceRest)
	if e, _ := fw.drive(t, untilGrace); limitOf(e) != 1000 {
		t.Fatalf("after the writer finished: %+v (limit %d); want limit 1000", e, limitOf(e))
	}
}
