package reload_test

import (
	"bytes"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// rootEnv names, to the test binary run again by
// TestConfigInTheRootDirectory, the directory it makes its root.
const rootEnv = "RATEKEEPER_RELOAD_TEST_ROOT"

// TestConfigInTheRootDirectory: a config file in "/" (a container's
// /ratekeeper.yaml), and one in a directory right under "/" (/etc), whose
// removal and making again the watch of "/" sees. inotify names the
// events of a watch of "/" "//ratekeeper.yaml" and "//etc", which the
// Watcher compared with the names it knows, "/ratekeeper.yaml" and
// "/etc": a new file renamed over /ratekeeper.yaml was never applied, nor
// was anything after /etc was removed and made again (no reload within
// 20s). The test runs again in a user namespace (so with no privilege
// outside it) whose root is a directory of its own.
func TestConfigInTheRootDirectory(t *testing.T) {
	if root := os.Getenv(rootEnv); root != "" {
		if err := syscall.Chroot(root); err != nil {
			// A user namespace without privileges (Ubuntu's AppArmor
			// restriction of unprivileged ones).
			t.Skipf("chroot in a user namespace: %v", err)
		}
		if err := os.Chdir("/"); err != nil {
			t.Fatal(err)
		}
		inTheRootDirectory(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestConfigInTheRootDirectory$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), rootEnv+"="+t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	out, err := cmd.CombinedOutput()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Skipf("cannot run the test in a user namespace of its own: %v", err)
	}
	if err != nil {
		t.Fatalf("in a root directory of its own: %v\n%s", err, out)
	}
	if bytes.Contains(out, []byte("--- SKIP")) {
		t.Skipf("skipped in a root directory of its own:\n%s", out)
	}
}

// inTheRootDirectory is TestConfigInTheRootDirectory's run in a root
// directory of its own.
func inTheRootDirectory(t *testing.T) {
	writeAtomic(t, "/ratekeeper.yaml", config(5))
	got, events := watchLimit(t, "/ratekeeper.yaml")
	writeAtomic(t, "/ratekeeper.yaml", config(7))
	expectLimit(t, events, got, 7, "a new /ratekeeper.yaml renamed over it")

	path := writeIn(t, "/etc", "rk.yaml", 5)
	cfg, err := policy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	events = make(chan event, 10)
	w, err := reload.New(path, func(cfg *policy.Config) error {
		got.Store(cfg.Policies[0].Spec().Limit)
		return nil
	}, reload.InForce(cfg), reload.WithLogger(quiet), reload.WithDebounce(20*time.Millisecond), reload.WithGrace(time.Millisecond),
		reload.OnReload(func(cfg *policy.Config, err error) { events <- event{cfg, err} }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if err := os.RemoveAll("/etc"); err != nil {
		t.Fatal(err)
	}
	if e := next(t, events); e.err == nil {
		t.Fatalf("/etc removed: reload %+v, want it reported missing", e)
	}
	writeIn(t, "/etc", "rk.yaml", 9)
	expectLimit(t, events, got, 9, "/etc removed, reported missing, and made again")
}
