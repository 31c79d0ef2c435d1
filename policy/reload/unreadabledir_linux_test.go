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

// unprivilegedEnv tells the test binary run again by
// TestDirectoryNoLongerReadable that it runs without privileges.
const unprivilegedEnv = "RATEKEEPER_RELOAD_TEST_UNPRIVILEGED"

// TestDirectoryNoLongerReadable: the config file's directory, once
// watched, loses its read permission for the Watcher's user (chmod 311:
// it may still go through it and read the file). inotify cannot watch it
// again, but its watch goes on working; the Watcher, failing to add it
// again at the next reload, removed it, and a new file renamed over the
// old one was never applied (no reload within 20s). Root reads every
// directory: it runs the test again as another user, in a user namespace
// of its own.
func TestDirectoryNoLongerReadable(t *testing.T) {
	if os.Getenv(unprivilegedEnv) != "" || os.Geteuid() != 0 {
		noLongerReadable(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDirectoryNoLongerReadable$", "-test.count=1", "-test.v")
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
