package reload_test

import (
	"errors"
	"fmt"
	"github.com/ratekeeper/ratekeeper/internal/logbuf"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// TestWithLoggerNilIsDefault: WithLogger(nil) is the default logger, as
// its doc says, not a Watcher that cannot log: the rejection of a broken
// file goes to slog.Default.
func TestWithLoggerNilIsDefault(t *testing.T) {
	var logs lockedBuffer // slog.Default is the process's: locked for any other goroutine logging on it
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	path := filepath.Join(t.TempDir(), "rk.yaml")
	writeAtomic(t, path, config(1))
	w, err := reload.New(path, func(*policy.Config) error { return nil },
		reload.WithLogger(nil), reload.WithDebounce(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	writeAtomic(t, path, "policies: [")
	if err := w.Reload(); err == nil {
		t.Fatal("Reload of a broken file = nil")
	}
	if !strings.Contains(logs.String(), "config rejected") || !strings.Contains(logs.String(), path) {
		t.Errorf("slog.Default got %q, want the rejection of %s", logs.String(), path)
	}
}

// TestNewRelativePathWithoutWorkingDirectory: a relative path whose
// working directory has been removed cannot be made absolute: New says so
// instead of watching whatever "" comes to.
func TestNewRelativePathWithoutWorkingDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cwd")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	w, err := reload.New("rk.yaml", func(*policy.Config) error { return nil }, reload.WithLogger(quiet))
	if w != nil {
		w.Close()
	}
	if err == nil || !strings.HasPrefix(err.Error(), "reload: ") || !strings.Contains(err.Error(), "getwd") {
		t.Errorf("New of a relative path in a removed working directory: %v, want the getwd error", err)
	}
}

// TestSmallestGraceStillReports: with the smallest grace, a nanosecond,
// a broken file found by a file event is read again a nanosecond later and
// reported then; it is not left unreported because its grace was too
// short to set the timer for.
func TestSmallestGraceStillReports(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path, cfg := loaded(t, config(5))
	clock := newFakeClock()
	ticks := make(chan struct{}, 100)
	events := make(chan event, 10)
	w, err := reload.New(path, func(*policy.Config) error { return nil },
		reload.WithLogger(quiet), reload.InForce(cfg), reload.WithDebounce(fakeDebounce), reload.WithGrace(time.Nanosecond),
		reload.WithClock(clock), reload.AfterTimer(func() { ticks <- struct{}{} }),
		reload.OnReload(func(cfg *policy.Config, err error) { events <- event{cfg, err} }))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	writeAtomic(t, path, "policies: [")
	fw := &fakeWatch{path: path, w: w, clock: clock, ticks: ticks, events: events}
	var retries []time.Duration
	e, _ := fw.drive(t, func(d time.Duration) bool {
		if d != fakeDebounce {
			retries = append(retries, d)
		}
		return false
	})
	if e.err == nil || e.cfg != nil {
		t.Fatalf("broken file: %+v, want its error reported", e)
	}
	if len(retries) != 1 || retries[0] != time.Nanosecond {
		t.Errorf("read again after %v, want once, after the grace of 1ns", retries)
	}
}

// closeWatcher closes w and sends the result on done: the goroutine the
// test looks for in the stacks.
func closeWatcher(w *reload.Watcher, done chan<- error) { done <- w.Close() }

// closeBlockedInReload tells whether the goroutine running closeWatcher is
// blocked in package reload itself (waiting for the Watcher's goroutine),
// not running nor waiting in a package reload calls.
func closeBlockedInReload() bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "reload_test.closeWatcher(") {
			continue
		}
		lines := strings.Split(g, "\n")
		if strings.Contains(lines[0], "[running]") || strings.Contains(lines[0], "[runnable]") {
			return false
		}
		for _, l := range lines[1:] {
			if strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "runtime.") || strings.HasPrefix(l, "internal/") {
				continue
			}
			return strings.HasPrefix(l, "github.com/ratekeeper/ratekeeper/policy/reload.")
		}
	}
	return false
}

// TestCloseWaitsForReload: Close called while the Watcher's goroutine is
// in a reload (a slow apply) waits for it, as its doc says: when Close
// returns, the reload is over and reported, and nothing of the Watcher
// runs any more (a program closes its store after Close).
func TestCloseWaitsForReload(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path, cfg := loaded(t, config(5))
	clock := newFakeClock()
	entered, release := make(chan struct{}), make(chan struct{})
	var reported atomic.Bool
	w, err := reload.New(path, func(*policy.Config) error {
		close(entered)
		<-release
		return nil
	}, reload.WithLogger(quiet), reload.InForce(cfg), reload.WithDebounce(fakeDebounce), reload.WithClock(clock),
		reload.OnReload(func(*policy.Config, error) { reported.Store(true) }))
	if err != nil {
		t.Fatal(err)
	}
	writeAtomic(t, path, config(7))
	clock.advance(await(t, clock.resets, "no event"))
	await(t, entered, "no apply")
	closeDuringReload(t, w, release, "the reload's apply")
	if !reported.Load() {
		t.Error("Close returned before the reload in progress was reported")
	}
}

// TestBusyDirectoryDoesNotPostponeReload: the file sits beside one that
// changes all the time (a log file written every millisecond); only the
// file's own events (and its directories') start the debounce, so the new
// version is applied one debounce after it is saved. Were every event in
// the directory to start the debounce again, the log's writes would put
// the reload off for as long as they go on.
func TestBusyDirectoryDoesNotPostponeReload(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path, cfg := loaded(t, config(5))
	events := make(chan event, 10)
	w, err := reload.New(path, func(*policy.Config) error { return nil },
		reload.WithLogger(quiet), reload.InForce(cfg), reload.WithDebounce(500*time.Millisecond),
		reload.OnReload(func(cfg *policy.Config, err error) { events <- event{cfg, err} }))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	stop, stopped := make(chan struct{}), make(chan struct{})
	logFile := filepath.Join(filepath.Dir(path), "app.log")
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				f, err := os.OpenFile(logFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
				if err != nil {
					return
				}
				f.WriteString("GET / 200\n")
				f.Close()
			}
		}
	}()
	defer func() { close(stop); <-stopped }()
	writeAtomic(t, path, config(7))
	if e := next(t, events); e.err != nil || e.cfg.Policies[0].Spec().Limit != 7 {
		t.Fatalf("saved beside a busy log: %+v, want limit 7 applied", e)
	}
}

// TestFortyLinksFollowed: the path is a chain of 40 links (as many as the
// kernel follows) in one directory to a file in another; the chain is
// followed to its end, so that saving that file is seen.
func TestFortyLinksFollowed(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	links := t.TempDir()
	real := filepath.Join(t.TempDir(), "rk.yaml")
	writeAtomic(t, real, config(5))
	path := real
	for i := 40; i >= 1; i-- {
		link := filepath.Join(links, fmt.Sprintf("l%d", i))
		if err := os.Symlink(path, link); err != nil {
			t.Fatal(err)
		}
		path = link
	}
	fw := newFakeWatch(t, path, "")
	writeAtomic(t, real, config(7))
	if e, _ := fw.drive(t, nil); e.err != nil || fw.limit.Load() != 7 {
		t.Fatalf("saving the file 40 links lead to: %v, limit %d, want 7 applied", e.err, fw.limit.Load())
	}
}

// lockedBuffer is a log buffer written by other goroutines while the
// test reads it.
type lockedBuffer = logbuf.Buffer

// TestUnwatchableDirectoryIsLogged: a directory above the file's is
// replaced by a regular file, so the file's directory cannot be watched
// (not a directory, which is not a missing one to wait for): that is
// logged, with the directory, as follow's doc says.
func TestUnwatchableDirectoryIsLogged(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	base := t.TempDir()
	dir := filepath.Join(base, "x", "etc")
	path := writeIn(t, dir, "rk.yaml", 5)
	cfg, err := policy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	fw := &fakeWatch{path: path, clock: newFakeClock(), ticks: make(chan struct{}, 100), events: make(chan event, 10)}
	fw.w, err = reload.New(path, func(*policy.Config) error { return nil },
		reload.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), reload.InForce(cfg),
		reload.WithDebounce(fakeDebounce), reload.WithGrace(fakeGrace), reload.WithClock(fw.clock),
		reload.AfterTimer(func() { fw.ticks <- struct{}{} }),
		reload.OnReload(func(cfg *policy.Config, err error) { fw.events <- event{cfg, err} }))
	if err != nil {
		t.Fatal(err)
	}
	defer fw.w.Close()
	if err := os.RemoveAll(filepath.Join(base, "x")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "x"), []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	if e, reported := fw.drive(t, untilGrace); reported {
		t.Fatalf("reported at once: %v", e.err)
	}
	if got := logs.String(); !strings.Contains(got, "cannot watch a directory") || !strings.Contains(got, "dir="+dir) {
		t.Errorf("log %q, want a warning that %s cannot be watched", got, dir)
	}
}

// TestLinkUpAndAcross: the file is a link whose target goes up a
// directory and across ("../conf/rk.yaml"); the ".." is resolved, so the
// directory the file really is in is watched and saving it there is seen.
func TestLinkUpAndAcross(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	base := t.TempDir()
	for _, d := range []string{"app", "conf"} {
		if err := os.Mkdir(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	real := filepath.Join(base, "conf", "rk.yaml")
	writeAtomic(t, real, config(5))
	path := filepath.Join(base, "app", "rk.yaml")
	if err := os.Symlink(filepath.Join("..", "conf", "rk.yaml"), path); err != nil {
		t.Fatal(err)
	}
	fw := newFakeWatch(t, path, "")
	writeAtomic(t, real, config(7))
	if e, _ := fw.drive(t, nil); e.err != nil || fw.limit.Load() != 7 {
		t.Fatalf("saving the file ../conf/rk.yaml: %v, limit %d, want 7 applied", e.err, fw.limit.Load())
	}
}

// fakeWatcher is a Watcher of path on a fake clock (fakeDebounce,
// fakeGrace; opts come after and may change them) with apply, and no
// InForce: the file's content at New is the one in force.
func fakeWatcher(t *testing.T, path string, apply func(*policy.Config) error, opts ...reload.Option) *fakeWatch {
	t.Helper()
	fw := &fakeWatch{path: path, clock: newFakeClock(), ticks: make(chan struct{}, 1000), events: make(chan event, 100)}
	fw.start = fw.clock.Now()
	opts = append([]reload.Option{reload.WithLogger(quiet), reload.WithDebounce(fakeDebounce), reload.WithGrace(fakeGrace),
		reload.WithClock(fw.clock), reload.AfterTimer(func() { fw.ticks <- struct{}{} }),
		reload.OnReload(func(cfg *policy.Config, err error) { fw.events <- event{cfg, err} })}, opts...)
	var err error
	if fw.w, err = reload.New(path, apply, opts...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fw.w.Close() })
	return fw
}

// noRetry fails if the timer was set for anything but the debounce since
// the resets were last read: after a reload the timer started (its tick
// taken), only a file that is given its grace is read again.
func (fw *fakeWatch) noRetry(t *testing.T, after string) {
	t.Helper()
	for {
		select {
		case d := <-fw.clock.resets:
			if d != fakeDebounce {
				t.Errorf("after %s: the timer was set again, for %v", after, d)
			}
		default:
			return
		}
	}
}

// quiet fails if the hook was called or the timer set for anything but
// the debounce since they were last read.
func (fw *fakeWatch) quiet(t *testing.T, after string) {
	t.Helper()
	fw.noRetry(t, after)
	if len(fw.events) > 0 {
		t.Errorf("after %s: reported %+v", after, <-fw.events)
	}
}

// report drives fw until the hook is called, failing if the timer was set
// for anything but the debounce on the way or by that reload (no grace,
// no retry).
func (fw *fakeWatch) report(t *testing.T, after string) event {
	t.Helper()
	e, _ := fw.drive(t, func(d time.Duration) bool {
		if d != fakeDebounce {
			t.Errorf("after %s: the timer was set for %v", after, d)
		}
		return false
	})
	fw.noRetry(t, after)
	return e
}

// TestGraceEndsWhenFileIsPutBack: an emptied file, given its grace, is
// put back as it was: the grace is over. Emptied again much later, it is
// given a new grace, not reported at once as if the first had run out.
// Touching the file back reads it again once, with no timer of its own.
func TestGraceEndsWhenFileIsPutBack(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	fw := emptiedInGrace(t)
	writeAtomic(t, fw.path, config(5)) // the content in force
	fw.settle(t)
	fw.quiet(t, "the file was put back")
	fw.clock.advance(10 * fakeGrace)
	if err := os.WriteFile(fw.path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if e, reported := fw.drive(t, untilGrace); reported {
		t.Fatalf("emptied again, much later: reported at once: %v", e.err)
	}
	if fw.limit.Load() != 5 || len(fw.events) > 0 {
		t.Errorf("limit %d, %d reports; want 5 in force and nothing reported", fw.limit.Load(), len(fw.events))
	}
}

// TestBackToFailedApplyReportedOnce: back to a version whose apply failed
// (after a broken file), its apply error is reported again, once: a touch
// of the file then says nothing more, and no reload sets a timer of its
// own.
func TestBackToFailedApplyReportedOnce(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path := filepath.Join(t.TempDir(), "rk.yaml")
	writeAtomic(t, path, config(5))
	errApply := errors.New("limit 6 refused")
	var limit atomic.Int64
	fw := fakeWatcher(t, path, func(cfg *policy.Config) error {
		if cfg.Policies[0].Spec().Limit == 6 {
			return errApply
		}
		limit.Store(cfg.Policies[0].Spec().Limit)
		return nil
	})
	writeAtomic(t, path, config(6))
	if e := fw.report(t, "version 6's apply failed"); !errors.Is(e.err, errApply) {
		t.Fatalf("version 6: %+v, want its apply error", e)
	}
	writeAtomic(t, path, "policies: [\n")
	if e, _ := fw.drive(t, nil); e.err == nil {
		t.Fatalf("broken file: %+v, want its error", e)
	}
	writeAtomic(t, path, config(6))
	if e := fw.report(t, "back to version 6"); !errors.Is(e.err, errApply) || e.cfg != nil {
		t.Fatalf("back to version 6: %+v, want its apply error again", e)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	fw.settle(t)
	fw.quiet(t, "a touch of version 6")
	if limit.Load() != 0 || fw.w.Config() != nil {
		t.Errorf("applied limit %d, Config() %v; want nothing applied", limit.Load(), fw.w.Config())
	}
}

// TestTouchOfReportedFileSetsNoTimer: a broken file, reported once its
// grace is over, is touched: the reload that follows neither reports it
// again nor sets the timer (no new grace, no retry): there is nothing to
// wait for until the file changes.
func TestTouchOfReportedFileSetsNoTimer(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	fw := newFakeWatch(t, filepath.Join(t.TempDir(), "rk.yaml"), config(5))
	writeAtomic(t, fw.path, "policies: [\n")
	e, _ := fw.drive(t, func(d time.Duration) bool {
		if d != fakeDebounce && d != fakeGrace {
			t.Errorf("broken file: the timer was set for %v, neither the debounce nor the grace", d)
		}
		return false
	})
	if e.err == nil {
		t.Fatalf("broken file: %+v, want its error", e)
	}
	fw.noRetry(t, "the broken file was reported")
	if err := os.Chmod(fw.path, 0o600); err != nil {
		t.Fatal(err)
	}
	fw.settle(t)
	fw.quiet(t, "a touch of the reported file")
}

// TestGraceEndsWhenFileIsFinished: an emptied file, given its grace, is
// finished (a new version, applied): the grace is over. Emptied again much
// later, it is given a new grace, not reported at once.
func TestGraceEndsWhenFileIsFinished(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	fw := emptiedInGrace(t)
	writeAtomic(t, fw.path, config(7))
	if e := fw.report(t, "the file was applied"); e.err != nil || fw.limit.Load() != 7 {
		t.Fatalf("the file finished: %+v, limit %d, want 7 applied", e, fw.limit.Load())
	}
	fw.clock.advance(10 * fakeGrace)
	if err := os.WriteFile(fw.path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if e, reported := fw.drive(t, untilGrace); reported {
		t.Fatalf("emptied again, much later: reported at once: %v", e.err)
	}
}

// TestRestartNeededOnFileEvent: a version whose apply needs a restart for
// some setting, found by a file event, is reported with the Config and
// the error, which names the file; it counts as applied: no timer of its
// own, and an explicit Reload of the same content neither calls apply
// again nor returns an error.
func TestRestartNeededOnFileEvent(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path := filepath.Join(t.TempDir(), "rk.yaml")
	writeAtomic(t, path, config(5))
	var applies atomic.Int64
	fw := fakeWatcher(t, path, func(cfg *policy.Config) error {
		applies.Add(1)
		return fmt.Errorf("headers: %w", policy.ErrRestartNeeded)
	})
	writeAtomic(t, path, config(7))
	e := fw.report(t, "a version needing a restart")
	if !errors.Is(e.err, policy.ErrRestartNeeded) || e.cfg == nil || e.cfg.Policies[0].Spec().Limit != 7 {
		t.Fatalf("version 7: %+v, want its Config with ErrRestartNeeded", e)
	}
	if want := "reload: apply " + path + ": "; !strings.HasPrefix(e.err.Error(), want) {
		t.Errorf("error %q, want it to start %q", e.err, want)
	}
	if err := fw.w.Reload(); err != nil || applies.Load() != 1 || len(fw.events) > 0 {
		t.Errorf("Reload of the same content: %v, %d applies, %d reports; want nil, 1, 0", err, applies.Load(), len(fw.events))
	}
	if c := fw.w.Config(); c != e.cfg {
		t.Errorf("Config() = %v, want the version 7 reported", c)
	}
}

// TestBrokenAtNewReportedOnce: without InForce, a file that did not load
// at New, broken another way and then put back, is reported (it does not
// load), once: a touch of it says nothing more, as for any file reported
// already, and no reload sets a timer of its own.
func TestBrokenAtNewReportedOnce(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path := filepath.Join(t.TempDir(), "rk.yaml")
	const atNew = "policies: ["
	writeAtomic(t, path, atNew)
	fw := fakeWatcher(t, path, func(*policy.Config) error { return nil })
	writeAtomic(t, path, "policies: {")
	if err := fw.w.Reload(); err == nil {
		t.Fatal("Reload of a broken file = nil")
	}
	<-fw.events
	writeAtomic(t, path, atNew)
	if e := fw.report(t, "back to the content at New"); e.err == nil || e.cfg != nil {
		t.Fatalf("back to the content at New: %+v, want its error", e)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	fw.settle(t)
	fw.quiet(t, "a touch of it")
}

// TestReloadEndsGrace: an explicit Reload of an emptied file given its
// grace reports it at once, and the grace is over: emptied again later,
// after other content, it is given a full grace, not what was left of the
// first one's.
func TestReloadEndsGrace(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	fw := emptiedInGrace(t)
	for _, content := range []string{"", "policies: [\n"} {
		if err := os.WriteFile(fw.path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := fw.w.Reload(); err == nil {
			t.Fatalf("Reload of %q = nil, want its error", content)
		}
		if e := <-fw.events; e.err == nil {
			t.Fatalf("Reload of %q reported %+v, want its error", content, e)
		}
	}
	if err := os.WriteFile(fw.path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var left time.Duration
	if e, reported := fw.drive(t, func(d time.Duration) bool { left = d; return d != fakeDebounce }); reported {
		t.Fatalf("emptied again: reported at once: %v", e.err)
	}
	if left != fakeGrace {
		t.Errorf("emptied again: read again in %v, want a full grace of %v", left, fakeGrace)
	}
}

// closeDuringReload calls Close on w while the Watcher's goroutine is held
// in a reload (by release, which it closes once Close waits for that
// reload, or on failure) and fails t if Close returns before, never waits,
// or fails; what names what holds the reload.
func closeDuringReload(t *testing.T, w *reload.Watcher, release chan struct{}, what string) {
	t.Helper()
	closed := make(chan error, 1)
	go closeWatcher(w, closed)
	g := hangguard.New(wait)
	defer g.Stop()
	for !closeBlockedInReload() {
		select {
		case <-closed:
			close(release)
			t.Fatalf("Close returned while %s was still running", what)
		case <-g.C:
			if g.Expired() {
				close(release)
				t.Fatalf("Close neither returned nor waited for the Watcher's goroutine within %v", wait)
			}
		default:
			runtime.Gosched()
		}
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
}
