package reload_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// The fake clock's durations: distinct, so that a test tells the debounce
// after an event from the grace given to a file that does not load.
const (
	fakeDebounce = time.Second
	fakeGrace    = time.Minute
)

// fakeClock is a Watcher's clock whose one timer fires only when the test
// advances the time past it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	armed  bool
	at     time.Time
	c      chan time.Time
	resets chan time.Duration // every Reset, in order
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Unix(1_700_000_000, 0), c: make(chan time.Time), resets: make(chan time.Duration, 1000)}
}

func (fc *fakeClock) Now() time.Time {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return fc.now
}

func (fc *fakeClock) NewTimer() reload.Timer { return fakeTimer{fc} }

// advance moves the time on by d and fires the timer if it is due; it
// returns once the Watcher's goroutine has taken the firing, and reports
// whether it fired.
func (fc *fakeClock) advance(d time.Duration) bool {
	fc.mu.Lock()
	fc.now = fc.now.Add(d)
	fire := fc.armed && !fc.at.After(fc.now)
	if fire {
		fc.armed = false
	}
	now := fc.now
	fc.mu.Unlock()
	if fire {
		fc.c <- now
	}
	return fire
}

type fakeTimer struct{ fc *fakeClock }

func (t fakeTimer) C() <-chan time.Time { return t.fc.c }

func (t fakeTimer) Reset(d time.Duration) {
	t.fc.mu.Lock()
	t.fc.armed, t.fc.at = true, t.fc.now.Add(d)
	t.fc.mu.Unlock()
	t.fc.resets <- d
}

func (t fakeTimer) Stop() {
	t.fc.mu.Lock()
	t.fc.armed = false
	t.fc.mu.Unlock()
}

// fakeWatch is a Watcher on a fake clock of a file first holding first,
// whose apply records the first policy's limit ("": the file is there).
type fakeWatch struct {
	path   string
	w      *reload.Watcher
	clock  *fakeClock
	start  time.Time
	ticks  chan struct{} // one per reload the timer started, after it
	events chan event
	limit  atomic.Int64
}

func newFakeWatch(t *testing.T, path, first string, opts ...reload.Option) *fakeWatch {
	t.Helper()
	if first != "" {
		writeAtomic(t, path, first)
	}
	cfg, err := policy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	fw := &fakeWatch{path: path, clock: newFakeClock(), ticks: make(chan struct{}, 1000), events: make(chan event, 100)}
	fw.start = fw.clock.Now()
	fw.limit.Store(cfg.Policies[0].Spec().Limit)
	fw.w, err = reload.New(path, func(cfg *policy.Config) error {
		fw.limit.Store(cfg.Policies[0].Spec().Limit)
		return nil
	}, append([]reload.Option{reload.WithLogger(quiet), reload.InForce(cfg), reload.WithDebounce(fakeDebounce), reload.WithGrace(fakeGrace),
		reload.WithClock(fw.clock), reload.AfterTimer(func() { fw.ticks <- struct{}{} }),
		reload.OnReload(func(cfg *policy.Config, err error) { fw.events <- event{cfg, err} })}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fw.w.Close() })
	return fw
}

// drive fires the Watcher's timer each time it is set, and waits for the
// reload that follows, until the OnReload hook is called (returned, with
// true) or the timer is set for a duration stop accepts (not fired;
// returned with false).
func (fw *fakeWatch) drive(t *testing.T, stop func(time.Duration) bool) (event, bool) {
	t.Helper()
	g := hangguard.New(wait)
	defer g.Stop()
	for {
		select {
		case e := <-fw.events:
			return e, true
		case d := <-fw.clock.resets:
			if stop != nil && stop(d) {
				return event{}, false
			}
			if fw.clock.advance(d) {
				<-fw.ticks
			}
		case <-g.C:
			if g.Expired() {
				t.Fatalf("no reload and no timer set within %v", wait)
			}
		}
	}
}

// untilGrace stops drive once the Watcher gives a file that does not load
// its grace.
func untilGrace(d time.Duration) bool { return d == fakeGrace }

// TestTransientFileIsNotReported: a file seen empty, half written or
// missing while a tool saves it (truncated then written in place, removed
// then made again) is given time to be finished: no error reaches the
// hook, the rules in force stay, and the finished file is applied. Before,
// each was reported as an error (the document is empty; invalid YAML; no
// such file) one debounce after the first event.
func TestTransientFileIsNotReported(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	for _, tc := range []struct {
		name   string
		break_ func(path string) error
	}{
		{"truncated", func(path string) error { return os.WriteFile(path, nil, 0o644) }},
		{"blank", func(path string) error { return os.WriteFile(path, []byte("\n  \n"), 0o644) }},
		{"half written", func(path string) error {
			return os.WriteFile(path, []byte(config(7)[:len("policies:\n  - {name: p0, li")]), 0o644)
		}},
		{"removed", os.Remove},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fw := newFakeWatch(t, filepath.Join(t.TempDir(), "rk.yaml"), config(5))
			if err := tc.break_(fw.path); err != nil {
				t.Fatal(err)
			}
			if e, reported := fw.drive(t, untilGrace); reported {
				t.Fatalf("the file %s was reported at once: %v, want a grace to finish it", tc.name, e.err)
			}
			if fw.limit.Load() != 5 || fw.w.Config() == nil || fw.w.Config().Policies[0].Spec().Limit != 5 {
				t.Fatalf("limit %d while the file is %s, want 5 still in force", fw.limit.Load(), tc.name)
			}
			if err := os.WriteFile(fw.path, []byte(config(7)), 0o644); err != nil {
				t.Fatal(err)
			}
			e, _ := fw.drive(t, nil)
			if e.err != nil || fw.limit.Load() != 7 {
				t.Fatalf("after the file was finished: %v, limit %d, want 7 applied", e.err, fw.limit.Load())
			}
		})
	}
}

// TestPersistentFileErrorReportedOnce: a file that stays empty (or
// broken, or missing) is reported once its grace is over, not before, and
// once: a touch of it (an event, the same content) says nothing again.
// An explicit Reload still returns the error. Before, it was reported one
// debounce after the change, and again on every touch.
func TestPersistentFileErrorReportedOnce(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	for _, tc := range []struct {
		name   string
		break_ func(path string) error
		want   string
	}{
		{"empty", func(path string) error { return os.WriteFile(path, nil, 0o644) }, "empty"},
		{"broken", func(path string) error {
			return os.WriteFile(path, []byte("policies:\n  - {name: p0, limit: -1, window: 1m}\n"), 0o644)
		}, "limit"},
		{"removed", os.Remove, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fw := newFakeWatch(t, filepath.Join(t.TempDir(), "rk.yaml"), config(5))
			if err := tc.break_(fw.path); err != nil {
				t.Fatal(err)
			}
			e, _ := fw.drive(t, nil)
			if e.err == nil || !strings.Contains(e.err.Error(), tc.want) {
				t.Fatalf("file %s: %v, want an error saying %q", tc.name, e.err, tc.want)
			}
			if waited := fw.clock.Now().Sub(fw.start); waited < fakeGrace {
				t.Errorf("file %s reported after %v, want after its grace of %v", tc.name, waited, fakeGrace)
			}
			if fw.limit.Load() != 5 {
				t.Errorf("limit %d after the error, want 5 still in force", fw.limit.Load())
			}
			// A touch: an event, the same content (for a removed file, a
			// chmod of its directory).
			touch, mode := fw.path, os.FileMode(0o600)
			if tc.name == "removed" {
				touch, mode = filepath.Dir(fw.path), 0o700
			}
			if err := os.Chmod(touch, mode); err != nil {
				t.Fatal(err)
			}
			// Each event's reload is over before drive takes the next
			// Reset; one stopped at the grace would be a new hold.
			fired := false
			g := hangguard.New(wait)
			for !fired {
				select {
				case e := <-fw.events:
					t.Fatalf("touched: reported again: %v", e.err)
				case d := <-fw.clock.resets:
					if d == fakeGrace {
						t.Fatalf("touched: the same %s file given a new grace", tc.name)
					}
					if fired = fw.clock.advance(d); fired {
						<-fw.ticks
					}
				case <-g.C:
					if g.Expired() {
						t.Fatalf("no event for a touch within %v", wait)
					}
				}
			}
			g.Stop()
			if len(fw.events) > 0 {
				t.Fatalf("touched: reported again: %v", (<-fw.events).err)
			}
			if err := fw.w.Reload(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Reload of the %s file = %v, want its error", tc.name, err)
			}
			if e := <-fw.events; e.err == nil {
				t.Errorf("Reload of the %s file reported %+v, want its error", tc.name, e)
			}
			if err := os.WriteFile(fw.path, []byte(config(7)), 0o644); err != nil {
				t.Fatal(err)
			}
			if e, _ := fw.drive(t, nil); e.err != nil || fw.limit.Load() != 7 {
				t.Fatalf("after the file was fixed: %v, limit %d, want 7 applied", e.err, fw.limit.Load())
			}
		})
	}
}

// TestConfigMapSwapRemovesOldVersion: a Kubernetes ConfigMap update as the
// kubelet makes it (a new version directory, the "..data" link swapped to
// it, the old version removed) is one reload of the new version, with no
// error on the way.
func TestConfigMapSwapRemovesOldVersion(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	dir := t.TempDir()
	fw := newFakeWatch(t, configMap(t, dir, "rk.yaml", config(5)), "")
	configMapUpdate(t, dir, "..v2", "rk.yaml", config(8))
	if err := os.RemoveAll(filepath.Join(dir, "..v1")); err != nil {
		t.Fatal(err)
	}
	e, _ := fw.drive(t, nil)
	if e.err != nil || fw.limit.Load() != 8 {
		t.Fatalf("after the ConfigMap swap: %v, limit %d, want 8", e.err, fw.limit.Load())
	}
	configMapUpdate(t, dir, "..v3", "rk.yaml", config(9))
	if err := os.RemoveAll(filepath.Join(dir, "..v2")); err != nil {
		t.Fatal(err)
	}
	e, _ = fw.drive(t, nil)
	if e.err != nil || fw.limit.Load() != 9 {
		t.Fatalf("after a second swap: %v, limit %d, want 9", e.err, fw.limit.Load())
	}
}

// TestDirectoryMissingThroughGrace: the file's directory, two levels deep,
// is removed and made again while the Watcher gives the missing file its
// grace, so that the Watcher looks for the file's directories twice while
// they are missing. The second look removed the watch of the directory
// above them, which the first had added for them (it is not on the file's
// way), without adding it again: the directories made again and the file
// written in them were never seen.
func TestDirectoryMissingThroughGrace(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "windows" {
		t.Skipf("on %s the Watcher does not watch the parent directories (kqueue holds a descriptor per file)", runtime.GOOS)
	}
	t.Cleanup(func() { goleak.VerifyNone(t) })
	base := t.TempDir()
	dir := filepath.Join(base, "etc", "ratekeeper")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fw := newFakeWatch(t, filepath.Join(dir, "rk.yaml"), config(5))
	if err := os.RemoveAll(filepath.Join(base, "etc")); err != nil {
		t.Fatal(err)
	}
	if e, reported := fw.drive(t, untilGrace); reported {
		t.Fatalf("directory removed: reported at once: %v", e.err)
	}
	// The grace runs out: the file is missing (its directories are looked
	// for again).
	if !fw.clock.advance(fakeGrace) {
		t.Fatal("the grace's timer did not fire")
	}
	<-fw.ticks
	if e := next(t, fw.events); !errors.Is(e.err, os.ErrNotExist) {
		t.Fatalf("directory removed: %v, want the file missing", e.err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeAtomic(t, fw.path, config(7))
	if e, _ := fw.drive(t, nil); e.err != nil || fw.limit.Load() != 7 {
		t.Fatalf("directory made again: %v, limit %d, want 7", e.err, fw.limit.Load())
	}
}
