package reload_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
	"github.com/ratekeeper/ratekeeper/internal/logbuf"
	"github.com/ratekeeper/ratekeeper/policy"
	"github.com/ratekeeper/ratekeeper/policy/reload"
)

// panicWatch is a Watcher on a fake clock whose apply records the first
// policy's limit, but panics (a bug of the application's: an index out of
// range) on a version whose limit is 6, and whose OnReload hook sends what
// it is given but panics on its call number panicHook (counted from 1;
// 0: never).
type panicWatch struct {
	path    string
	w       *reload.Watcher
	clock   *fakeClock
	ticks   chan struct{}
	events  chan event
	limit   atomic.Int64
	applies atomic.Int64
	hooks   atomic.Int64
	log     *logbuf.Buffer
}

func newPanicWatch(t *testing.T, panicHook int64) *panicWatch {
	t.Helper()
	pw := &panicWatch{clock: newFakeClock(), ticks: make(chan struct{}, 1000), events: make(chan event, 100), log: &logbuf.Buffer{}}
	var cfg *policy.Config
	pw.path, cfg = loaded(t, config(5))
	pw.limit.Store(5)
	var err error
	pw.w, err = reload.New(pw.path, func(cfg *policy.Config) error {
		pw.applies.Add(1)
		if l := cfg.Policies[0].Spec().Limit; l == 6 {
			_ = cfg.Policies[len(cfg.Policies)].Name() // a bug: one past the end
		} else {
			pw.limit.Store(l)
		}
		return nil
	}, reload.WithLogger(slog.New(slog.NewTextHandler(pw.log, &slog.HandlerOptions{Level: slog.LevelDebug}))),
		reload.InForce(cfg), reload.WithDebounce(fakeDebounce), reload.WithGrace(fakeGrace),
		reload.WithClock(pw.clock), reload.AfterTimer(func() { pw.ticks <- struct{}{} }),
		reload.OnReload(func(cfg *policy.Config, err error) {
			if pw.hooks.Add(1) == panicHook {
				panic("the hook's bug")
			}
			pw.events <- event{cfg, err}
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pw.w.Close() })
	return pw
}

// write saves config(limit) over the file atomically and fires the
// Watcher's timer once its event has set it, returning once the reload
// it started has ended.
func (pw *panicWatch) write(t *testing.T, limit int) {
	t.Helper()
	writeAtomic(t, pw.path, config(limit))
	for {
		d := await(t, pw.clock.resets, "the file's event setting the timer")
		if pw.clock.advance(d) {
			await(t, pw.ticks, "the reload the timer started")
			return
		}
	}
}

// TestApplyPanicFailsReload: an apply that panics on a new version (a bug
// of the application's) fails that reload with an error naming the panic,
// as an apply returning an error does: the version is not in force
// (Config), the hook gets the error, the panic and its stack are logged,
// Reload tries it again (and returns the error), and the Watcher's
// goroutine goes on to apply the next version. Before, the panic ended the
// Watcher's goroutine, and with it the process ("panic: runtime error:
// index out of range [1] with length 1 ... reload.(*Watcher).loop").
func TestApplyPanicFailsReload(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	pw := newPanicWatch(t, 0)
	pw.write(t, 6)
	e := await(t, pw.events, "the hook's report of the version whose apply panics")
	want := "reload: apply " + pw.path + ": apply panicked: runtime error: index out of range [1] with length 1"
	if e.cfg != nil || e.err == nil || e.err.Error() != want {
		t.Fatalf("OnReload(applied %v, %v), want (nil, %q)", e.cfg != nil, e.err, want)
	}
	if got := pw.w.Config().Policies[0].Spec().Limit; got != 5 || pw.limit.Load() != 5 {
		t.Errorf("Config limit %d, applied %d after the panicking apply, want 5 in force", got, pw.limit.Load())
	}
	if log := pw.log.String(); !strings.Contains(log, "level=ERROR") || !strings.Contains(log, "apply panicked") ||
		!strings.Contains(log, "callbackpanic_test.go") {
		t.Errorf("log %q, want the panic at Error with its stack", log)
	}
	if err := pw.w.Reload(); err == nil || err.Error() != want || pw.applies.Load() != 2 {
		t.Errorf("Reload of the version whose apply panicked = %v (%d applies), want it tried again: %q", err, pw.applies.Load(), want)
	}
	if e := await(t, pw.events, "the hook's report of Reload"); e.err == nil || e.err.Error() != want {
		t.Errorf("OnReload after Reload: %v, want %q", e.err, want)
	}
	pw.write(t, 7)
	if e := await(t, pw.events, "the hook's report of the next version"); e.err != nil || pw.limit.Load() != 7 ||
		pw.w.Config().Policies[0].Spec().Limit != 7 {
		t.Errorf("next version: %v, limit %d, want 7 applied by the Watcher's goroutine", e.err, pw.limit.Load())
	}
	closed := make(chan error)
	go func() { closed <- pw.w.Close() }()
	if err, ok := hangguard.Within(closed, wait); !ok || err != nil {
		t.Errorf("Close after the panic: returned %v, %v; want nil, at once", ok, err)
	}
}

// TestHookPanicKeepsWatcher: an OnReload hook that panics (a bug of the
// application's) changes nothing of the reload it reports, which stands
// (applied, Config), is logged at Error with its stack, and the Watcher's
// goroutine goes on: the next version is applied and reported. Reload's
// caller, whose hook panics, gets the reload's outcome. Before, the panic
// ended the Watcher's goroutine, and with it the process ("panic: the
// hook's bug ... reload.(*Watcher).loop").
func TestHookPanicKeepsWatcher(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	pw := newPanicWatch(t, 1)
	pw.write(t, 7)
	if got := pw.w.Config().Policies[0].Spec().Limit; got != 7 || pw.limit.Load() != 7 {
		t.Errorf("Config limit %d, applied %d after the hook panicked, want 7 in force", got, pw.limit.Load())
	}
	if log := pw.log.String(); !strings.Contains(log, "level=ERROR") || !strings.Contains(log, "the hook's bug") ||
		!strings.Contains(log, "callbackpanic_test.go") {
		t.Errorf("log %q, want the hook's panic at Error with its stack", log)
	}
	pw.write(t, 8)
	if e := await(t, pw.events, "the hook's report of the next version"); e.err != nil || pw.limit.Load() != 8 ||
		e.cfg.Policies[0].Spec().Limit != 8 {
		t.Errorf("next version: %v, limit %d, want 8 applied and reported", e.err, pw.limit.Load())
	}

	pw2 := newPanicWatch(t, 1)
	writeAtomic(t, pw2.path, config(9))
	if err := pw2.w.Reload(); err != nil || pw2.limit.Load() != 9 {
		t.Errorf("Reload whose hook panics = %v, limit %d; want nil, 9 applied", err, pw2.limit.Load())
	}
	if err := os.Remove(pw2.path); err != nil {
		t.Fatal(err)
	}
	if err := pw2.w.Reload(); err == nil || !strings.Contains(err.Error(), filepath.Base(pw2.path)) {
		t.Errorf("Reload of a removed file after the hook panicked = %v, want the file's error", err)
	}
}

// TestApplyPanicAtNew: with InForce, New applies a file changed since the
// Config was read; an apply that panics on it fails that reload (reported,
// the Config given to InForce in force) and New returns a working Watcher.
// Before, the panic went up through New, which had started watching: the
// fsnotify watcher and its goroutine were left running for ever, unowned
// (goleak: "found unexpected goroutines: ... fsnotify.(*inotify).readEvents").
func TestApplyPanicAtNew(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path, cfg := loaded(t, config(5))
	writeAtomic(t, path, config(6))
	var errs []error
	var limit atomic.Int64
	w, err := func() (w *reload.Watcher, err error) {
		defer func() {
			if v := recover(); v != nil {
				err = fmt.Errorf("New panicked: %v", v)
			}
		}()
		return reload.New(path, func(cfg *policy.Config) error {
			if l := cfg.Policies[0].Spec().Limit; l == 6 {
				panic("apply's bug")
			} else {
				limit.Store(l)
			}
			return nil
		}, reload.WithLogger(quiet), reload.InForce(cfg), reload.OnReload(func(_ *policy.Config, err error) { errs = append(errs, err) }))
	}()
	if err != nil {
		t.Fatalf("New of a file whose apply panics: %v, want a Watcher", err)
	}
	defer w.Close()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "apply panicked: apply's bug") {
		t.Errorf("reported at New: %v, want the apply's panic", errs)
	}
	if got := w.Config().Policies[0].Spec().Limit; got != 5 {
		t.Errorf("Config limit %d, want 5 (InForce's) in force", got)
	}
	writeAtomic(t, path, config(7))
	if err := w.Reload(); err != nil || limit.Load() != 7 {
		t.Errorf("Reload of the next version: %v, limit %d; want 7 applied", err, limit.Load())
	}
}

// TestCloseFromHookOnItsOwnGoroutine: apply and the hook must not call
// Close or Reload, which would wait for them for ever; as New's doc says,
// they may start them on a goroutine of their own, which runs once the
// reload under way has ended: a hook that stops the Watcher on an error
// (go w.Close()) stops it, and its Close returns, its goroutine gone; an
// apply that asks for another reload (go w.Reload()) gets it.
func TestCloseFromHookOnItsOwnGoroutine(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
	path, cfg := loaded(t, config(5))
	clock := newFakeClock()
	closed, reloaded := make(chan error, 1), make(chan error, 1)
	var w *reload.Watcher // set before the first reload: the timer fires after
	var limit atomic.Int64
	w, err := reload.New(path, func(cfg *policy.Config) error {
		limit.Store(cfg.Policies[0].Spec().Limit)
		if limit.Load() == 6 {
			go func() { reloaded <- w.Reload() }()
		}
		return nil
	}, reload.WithLogger(quiet), reload.InForce(cfg), reload.WithDebounce(fakeDebounce), reload.WithClock(clock),
		reload.OnReload(func(_ *policy.Config, err error) {
			if err != nil {
				go func() { closed <- w.Close() }()
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	writeAtomic(t, path, config(6))
	clock.advance(await(t, clock.resets, "no event"))
	if err, ok := hangguard.Within(reloaded, wait); !ok || err != nil || limit.Load() != 6 {
		t.Fatalf("Reload started by apply: ended %v, %v; limit %d; want nil, at once, 6 in force", ok, err, limit.Load())
	}
	if err := os.WriteFile(path, []byte("policies: [{name: p0, limit: -1, window: 1h}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w.Reload(); err == nil {
		t.Fatal("Reload of a broken file: nil error")
	}
	if err, ok := hangguard.Within(closed, wait); !ok || err != nil {
		t.Errorf("Close started by the hook: ended %v, %v; want nil, at once", ok, err)
	}
}
