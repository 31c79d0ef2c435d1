//go:build unix

package reload_test

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestNewOutOfDescriptors: a process at its limit of open files cannot
// make the file watch; New returns that error instead of a Watcher with
// none.
func TestNewOutOfDescriptors(t *testing.T) {
	path, cfg := loaded(t, config(5))
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("no descriptor limit to lower here: %v", err)
	}
	// The lowest free descriptor: with the limit at it, none can be opened.
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	low := f.Fd()
	f.Close()
	restore := func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Errorf("restoring the descriptor limit: %v", err)
		}
	}
	at := lim
	setLimit(&at.Cur, low)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &at); err != nil {
		t.Skipf("cannot lower the descriptor limit: %v", err)
	}
	w, err := reload.New(path, func(*policy.Config) error { return nil }, reload.WithLogger(quiet), reload.InForce(cfg))
	restore()
	if w != nil {
		w.Close()
	}
	if err == nil || !strings.HasPrefix(err.Error(), "reload: ") || !strings.Contains(err.Error(), "too many open files") {
		t.Errorf("New with no descriptor left: %v, want the watch's error", err)
	}
}

// TestReloadClosesTheFile: each reload closes the file it read; a
// SIGHUP handler calling Reload many times holds no more descriptors
// after than before.
func TestReloadClosesTheFile(t *testing.T) {
	path, cfg := loaded(t, config(5))
	w, err := reload.New(path, func(*policy.Config) error { return nil },
		reload.WithLogger(quiet), reload.InForce(cfg), reload.WithDebounce(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// The files of /proc and /sys are left out: the runtime (reading its
	// cgroup's CPU limit), the race detector and the listing itself open
	// them on threads of their own at any moment.
	open := func() int {
		fds, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skipf("cannot count open descriptors here: %v", err)
		}
		n := 0
		for _, fd := range fds {
			target, err := os.Readlink("/proc/self/fd/" + fd.Name())
			if err == nil && !strings.HasPrefix(target, "/proc/") && !strings.HasPrefix(target, "/sys/") {
				n++
			}
		}
		return n
	}
	before := open()
	for range 100 {
		if err := w.Reload(); err != nil {
			t.Fatal(err)
		}
	}
	if after := open(); after > before {
		t.Errorf("%d descriptors open after 100 Reloads, %d before", after, before)
	}
}

// setLimit sets an rlimit field to v, whichever integer type the system
// gives the field (uint64 on Linux and macOS, int64 on FreeBSD).
func setLimit[T ~int64 | ~uint64](field *T, v uintptr) { *field = T(v) }
