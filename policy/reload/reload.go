// Package reload keeps a running rate limiter in step with its
// configuration file: a [Watcher] watches the file (through its directory,
// so that editors which save by writing a new file and renaming it over the
// old one are seen, as are Kubernetes ConfigMap updates; when the file is a
// link, the directory of the file it links to is watched too), waits until the
// writes settle, loads it with [policy.Load]'s parser and hands each valid
// new version to a function, typically the middleware's ApplyConfig, which
// swaps the active rule set atomically while requests are in flight.
//
// A file that does not parse or validate changes nothing: the previous
// rules keep running, and the error goes to the [OnReload] hook and the
// logger. [Watcher.Reload] reloads on demand, for SIGHUP or a
// configuration service:
//
//	cfg, err := policy.Load(path)
//	...
//	m, err := middleware.FromConfig(store, cfg)
//	...
//	w, err := reload.New(path, m.ApplyConfig, reload.InForce(cfg))
//	...
//	defer w.Close()
//	hup := make(chan os.Signal, 1)
//	signal.Notify(hup, syscall.SIGHUP)
//	go func() {
//		for range hup {
//			w.Reload()
//		}
//	}()
//
// Policies whose name and Spec are unchanged keep their counters across a
// reload (the stores key state by Spec and namespaced key); see
// middleware.SetPolicies.
package reload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/ratekeeper/ratekeeper/policy"
)

// maxFile bounds the bytes read from the file; the parser refuses far
// smaller files with an error naming the limit.
const maxFile = 1 << 20

// DefaultDebounce is how long a Watcher waits after the last change to the
// file before it reloads.
const DefaultDebounce = 250 * time.Millisecond

// A Watcher reloads a configuration file when it changes, and on demand.
// Build one with [New]; stop it with Close. It is safe for concurrent use;
// reloads are serialised.
type Watcher struct {
	path     string
	apply    func(*policy.Config) error
	log      *slog.Logger
	hook     func(*policy.Config, error)
	debounce time.Duration

	fw     *fsnotify.Watcher
	target string        // the file path links to, if a link; loop goroutine only (after New)
	done   chan struct{} // closed by Close
	exited chan struct{} // closed when the loop goroutine returns
	once   sync.Once

	inForce *policy.Config // set by InForce

	mu         sync.Mutex // serialises reloads
	applied    []byte     // the content last applied
	current    *policy.Config
	loadFailed bool // the last reload found a file that did not load
}

// An Option configures a Watcher.
type Option func(*Watcher) error

// WithLogger sets the logger of reloads (Info), rejected files and failed
// applies (Error). The default, and nil, is [slog.Default]; to silence a
// Watcher pass slog.New(slog.DiscardHandler).
func WithLogger(l *slog.Logger) Option {
	return func(w *Watcher) error {
		if l == nil {
			l = slog.Default()
		}
		w.log = l
		return nil
	}
}

// OnReload sets a function called after every reload that found new
// content: with the Config applied and a nil error, or with a nil Config
// and the error (a file that does not load, or apply's error). When apply
// returns an error matching [policy.ErrRestartNeeded] (its policies are
// applied, another setting waits for a restart) the hook gets the Config
// and that error. A file
// that did not load and is then put back to the content in force is
// reported too, with that content's Config and a nil error (nothing is
// applied). It runs on
// the Watcher's goroutine (or Reload's caller; with [InForce], also New's
// caller, before New returns, if the file changed since the Config was
// read) and must not call Reload or Close.
func OnReload(hook func(cfg *policy.Config, err error)) Option {
	return func(w *Watcher) error {
		if hook == nil {
			return errors.New("reload: OnReload: hook is nil")
		}
		w.hook = hook
		return nil
	}
}

// InForce tells [New] which Config the rules in force were built from
// (the one given to middleware.FromConfig, read with [policy.Load]). If
// the file no longer holds it when the Watcher starts watching (it changed
// between Load and New, an edit no file event would report), New applies
// the file at once, as [Watcher.Reload] does: no change is missed. Without
// InForce, New takes the file's content at New for the content in force.
func InForce(cfg *policy.Config) Option {
	return func(w *Watcher) error {
		if cfg == nil || cfg.Source() == nil {
			return errors.New("reload: InForce: config is nil or was not read from a file")
		}
		w.inForce = cfg
		return nil
	}
}

// WithDebounce sets how long the Watcher waits after the last change
// before it reloads (editors write a file in several steps); the default
// is [DefaultDebounce].
func WithDebounce(d time.Duration) Option {
	return func(w *Watcher) error {
		if d <= 0 {
			return errors.New("reload: WithDebounce: duration must be positive")
		}
		w.debounce = d
		return nil
	}
}

// New returns a Watcher of the file at path that calls apply with each
// valid new version. The file is not applied at start (load it yourself to
// build the middleware); its content at New is remembered, so a reload that
// finds the same bytes does nothing. Pass the Config you loaded with
// [InForce] so that an edit made between loading it and New is applied
// too. The directory holding the file must exist.
func New(path string, apply func(*policy.Config) error, opts ...Option) (*Watcher, error) {
	if apply == nil {
		return nil, errors.New("reload: apply is nil")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("reload: %w", err)
	}
	w := &Watcher{path: abs, apply: apply, log: slog.Default(), debounce: DefaultDebounce,
		done: make(chan struct{}), exited: make(chan struct{})}
	for _, opt := range opts {
		if opt == nil {
			return nil, errors.New("reload: nil Option")
		}
		if err := opt(w); err != nil {
			return nil, err
		}
	}
	if w.inForce != nil {
		w.applied, w.current = w.inForce.Source(), w.inForce
	} else if data, err := readFile(abs); err == nil {
		w.applied = data
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("reload: %w", err)
	}
	if err := fw.Add(filepath.Dir(abs)); err != nil {
		fw.Close()
		return nil, fmt.Errorf("reload: watch %s: %w", filepath.Dir(abs), err)
	}
	w.fw = fw
	w.follow()
	if w.inForce != nil {
		// Watching now: a change made since the Config was read is
		// applied here (its outcome is logged and reported like any
		// reload's); one made from now on raises an event.
		_ = w.Reload()
	}
	go w.loop()
	return w, nil
}

// Close stops watching and waits for the Watcher's goroutine to return. It
// is idempotent; Reload still works after it.
func (w *Watcher) Close() error {
	var err error
	w.once.Do(func() {
		close(w.done)
		<-w.exited
		err = w.fw.Close()
	})
	return err
}

// Config returns the configuration last applied by the Watcher, or nil.
func (w *Watcher) Config() *policy.Config {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.current
}

// loop turns file events into debounced reloads until Close.
func (w *Watcher) loop() {
	defer close(w.exited)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	dataLink := filepath.Join(filepath.Dir(w.path), "..data")
	for {
		select {
		case <-w.done:
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			// Our file, the file it links to, or the "..data" link a
			// Kubernetes ConfigMap volume swaps under it.
			if ev.Name == w.path || ev.Name == dataLink || w.target != "" && ev.Name == w.target {
				timer.Reset(w.debounce)
			}
		case err, ok := <-w.fw.Errors:
			if !ok {
				return
			}
			w.log.LogAttrs(context.Background(), slog.LevelError, "ratekeeper: config watch failed",
				slog.String("file", w.path), slog.Any("error", err))
			// Events may have been lost with it (a full event queue): read
			// the file anyway; unchanged content costs a read.
			timer.Reset(w.debounce)
		case <-timer.C:
			w.follow()
			w.Reload()
		}
	}
}

// follow notes the file w.path links to, if it is a link to a file in
// another directory, and watches that directory too, so that saving the
// file where it really is (say by renaming a new file over it) is seen.
// A directory that cannot be watched is logged and left out.
func (w *Watcher) follow() {
	w.target = ""
	real, err := filepath.EvalSymlinks(w.path)
	if err != nil || real == w.path {
		return
	}
	if real, err = filepath.Abs(real); err != nil {
		return
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(w.path)); err == nil && filepath.Join(dir, filepath.Base(w.path)) == real {
		return // not a link: a link in the path of its directory, whose events name w.path
	}
	// Watched already, unless it was removed since (the watch goes with
	// it) and made again.
	if dir := filepath.Dir(real); !slices.Contains(w.fw.WatchList(), dir) {
		if err := w.fw.Add(dir); err != nil {
			w.log.LogAttrs(context.Background(), slog.LevelWarn, "ratekeeper: cannot watch the directory the config file links to",
				slog.String("file", w.path), slog.String("dir", dir), slog.Any("error", err))
			return
		}
	}
	w.target = real
}

// Reload reads the file now and, if its content changed since the last
// version applied, parses it and calls apply. A file that does not load
// changes nothing and returns the error (also passed to the OnReload hook
// and logged); so does an error from apply. An error matching
// [policy.ErrRestartNeeded] is returned too, but the Config counts as
// applied ([Watcher.Config] returns it; logged as a warning). Unchanged
// content returns nil
// without calling apply. Reload is safe to call from any goroutine, for
// example on SIGHUP.
func (w *Watcher) Reload() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	data, err := readFile(w.path)
	if err == nil && w.applied != nil && bytes.Equal(data, w.applied) {
		if w.loadFailed {
			// The file is back to the content in force: the error
			// reported last is over.
			w.loadFailed = false
			cfg := w.current
			if cfg == nil { // in force since New
				cfg, _ = policy.ParseConfig(data, w.path)
			}
			w.log.LogAttrs(context.Background(), slog.LevelInfo, "ratekeeper: config restored; the rules in force are unchanged",
				slog.String("file", w.path))
			w.report(cfg, nil)
		}
		return nil
	}
	var cfg *policy.Config
	if err == nil {
		cfg, err = policy.ParseConfig(data, w.path)
	}
	if err != nil {
		w.loadFailed = true
		w.log.LogAttrs(context.Background(), slog.LevelError, "ratekeeper: config rejected; previous rules keep running",
			slog.String("file", w.path), slog.Any("error", err))
		w.report(nil, err)
		return err
	}
	w.loadFailed = false
	if err := w.apply(cfg); errors.Is(err, policy.ErrRestartNeeded) {
		// The policies are in force; some other setting waits for a
		// restart.
		err = fmt.Errorf("reload: apply %s: %w", w.path, err)
		w.applied, w.current = data, cfg
		w.log.LogAttrs(context.Background(), slog.LevelWarn, "ratekeeper: config reloaded; some settings take effect only at restart",
			slog.String("file", w.path), slog.Int("policies", len(cfg.Policies)), slog.Any("error", err))
		w.report(cfg, err)
		return err
	} else if err != nil {
		err = fmt.Errorf("reload: apply %s: %w", w.path, err)
		w.log.LogAttrs(context.Background(), slog.LevelError, "ratekeeper: config apply failed",
			slog.String("file", w.path), slog.Any("error", err))
		w.applied = data // not retried until the file changes again
		w.report(nil, err)
		return err
	}
	w.applied, w.current = data, cfg
	w.log.LogAttrs(context.Background(), slog.LevelInfo, "ratekeeper: config reloaded",
		slog.String("file", w.path), slog.Int("policies", len(cfg.Policies)))
	w.report(cfg, nil)
	return nil
}

func (w *Watcher) report(cfg *policy.Config, err error) {
	if w.hook != nil {
		w.hook(cfg, err)
	}
}

// readFile reads at most maxFile+1 bytes of the file at path.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reload: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("reload: %s: %w", path, err)
	}
	return data, nil
}
