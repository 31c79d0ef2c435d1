// Package reload keeps a running rate limiter in step with its
// configuration file: a [Watcher] watches the file (through its directory,
// so that editors which save by writing a new file and renaming it over the
// old one are seen, as are Kubernetes ConfigMap updates; the directories of
// the links on the way to the file it resolves to and of that file are
// watched too, so a link re-pointed or the real file saved is seen, and on
// Linux and Windows their parents, so a directory removed and made again
// is; on Linux the file itself too, so that a write through another name
// of it is seen, as the host's of a file bind-mounted into a container),
// waits until no event has come for the debounce ([WithDebounce]),
// loads it with [policy.Load]'s parser and hands each valid new version to
// a function, typically the middleware's ApplyConfig, which swaps the
// active rule set atomically while requests are in flight.
//
// A file that does not parse or validate changes nothing: the previous
// rules keep running, and the error goes to the [OnReload] hook and the
// logger. Found after a change, such a file is first given a grace
// ([WithGrace]) to be finished, since tools that save a file by truncating
// it and writing it, or by removing it and making it again, leave it empty
// or missing for a moment; it is reported only if it still does not load
// then, and once: events that leave it as it is (a touch, a chmod) do not
// report it again. A file that loads but that the check given by
// [WithCheck] refuses is such a file too: with middleware's
// CheckConfigRoutes, a new version naming a route the router does not
// have (a typo, "POST /logn") is refused as CheckRoutes refuses it at
// start, instead of replacing a limit with one that never applies.
// [Watcher.Reload] reloads on demand, for SIGHUP or a configuration
// service:
//
//	cfg, err := policy.Load(path)
//	...
//	m, err := middleware.FromConfig(store, cfg, middleware.WithPatternFunc(policy.ChiPattern(r)))
//	...
//	if err := m.CheckRoutes(nil); err != nil { // once r's routes are registered
//		...
//	}
//	w, err := reload.New(path, m.ApplyConfig, reload.InForce(cfg),
//		reload.WithCheck(func(c *policy.Config) error { return m.CheckConfigRoutes(c, nil) }))
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
// reload (the stores key state by Spec and namespaced key), however the
// Spec is written: a bucket's burst written out at its limit ("burst: 10"
// beside "limit: 10") is the default burst (see policy.Policy.Spec). A
// policy whose Spec a reload tightens, looser in nothing (a lower limit,
// burst or rate, a longer window that holds the old one, finer buckets;
// not coarser buckets, a window the old one does not divide, nor a
// leaky_queue's lower max_delay alone), gets new counters but is also
// checked and counted under the Spec it replaced while that
// Spec's counters hold requests of before the reload: a client gets no
// fresh quota, no more than the replaced Spec would have given it nor
// more than the new one since the reload. Any other change (but a
// raised limit of fixed_window, sliding_window or sliding_buckets, judged
// on the replaced Spec's counters) starts the policy from a full
// allowance. See middleware.SetPolicies for the details.
//
// # Writing the file
//
// A file written in place may be read before its writer has finished: a
// Watcher reads it once its events have stopped for the debounce (and
// [Watcher.Reload] whenever it is called). On Linux, where the kernel tells
// when a writer closes the file, a file written and not closed since is not
// applied when its events stop: it is given the grace ([WithGrace]) to be
// finished, and read again one debounce after its next event (its writer's
// close is one) or when the grace is over; then it is applied, if it
// loads, whether its writer has closed it or not (a warning says so). A
// writer that closes the file between its parts (a shell's "> file", then
// ">> file"), one that pauses mid-file with the file
// open for longer than the debounce and the grace together, or, on other
// systems, one that pauses for longer than the debounce, may have what it
// has written so far applied if that loads (a "limit: 1000" cut after
// "limit: 1" does), until it goes on and the whole file is read one
// debounce after its last write. To change the file safely, write the new
// version to another file in the same directory and rename it over the old
// one, as editors that save atomically, mv and Kubernetes ConfigMap updates
// do: the file then goes from one whole version to the next, and the
// Watcher never reads a partial one.
package reload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/ratekeeper/ratekeeper/internal/errlist"
	"github.com/ratekeeper/ratekeeper/policy"
)

// maxFile bounds the bytes read from the file; the parser refuses far
// smaller files with an error naming the limit.
const maxFile = 1 << 20

// DefaultDebounce is how long a Watcher waits after the last change to the
// file before it reloads.
const DefaultDebounce = 250 * time.Millisecond

// DefaultGrace is how long a Watcher gives a file that does not load
// (empty, half written, missing), found after a change, to be finished
// before it reports it, and, on Linux, a file that loads but that its
// writer has not closed before it applies it.
const DefaultGrace = 2 * time.Second

// A Watcher reloads a configuration file when it changes, and on demand.
// Build one with [New]; stop it with Close. It is safe for concurrent use;
// reloads are serialised.
type Watcher struct {
	path     string
	apply    func(*policy.Config) error
	log      *slog.Logger
	hook     func(*policy.Config, error)
	debounce time.Duration
	grace    time.Duration
	clock    clock  // time.Now and time.NewTimer but in tests
	tick     func() // tests: called after each reload the timer started

	fw     *fsnotify.Watcher
	writes *writeWatch     // whether the file's writer has closed it (Linux); loop goroutine only (after New), and Close
	names  map[string]bool // the paths whose events matter (see follow); loop goroutine only (after New)
	done   chan struct{}   // closed by Close
	exited chan struct{}   // closed when the loop goroutine returns
	once   sync.Once

	inForce *policy.Config             // set by InForce
	check   func(*policy.Config) error // set by WithCheck

	mu      sync.Mutex // serialises reloads
	applied []byte     // the content last applied, or whose apply failed
	// current is the Config last applied; written under mu, read without
	// it, so that apply and the OnReload hook may call Config.
	current     atomic.Pointer[policy.Config]
	loadFailed  bool   // the last reload found a file that did not load (reported)
	failKey     string // what it found: failKey's of that file
	holding     bool   // a file that does not load, not reported yet, is given its grace
	heldKey     string // failKey of that file
	heldSince   time.Time
	applyFailed bool  // apply failed for applied: Reload retries it
	applyErr    error // that failure
}

// An Option configures a Watcher.
type Option func(*Watcher) error

// WithLogger sets the logger of reloads (Info), rejected files and failed
// applies (Error). The default, and nil, is [slog.Default]; to silence a
// Watcher pass slog.New(slog.DiscardHandler). Its handler runs on the
// Watcher's goroutine too, where a panic of it is not recovered: it ends
// the process, as any goroutine's does.
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
// content, and after every [Watcher.Reload] that found a file that does
// not load (reported before or not) or called apply again for content
// whose apply failed: with the Config applied and a nil error, or with a
// nil Config and the error (a file that does not load or that the check
// of [WithCheck] refuses, or apply's error). When apply
// returns an error matching [policy.ErrRestartNeeded] (its policies are
// applied, another setting waits for a restart) the hook gets the Config
// and that error. A file
// that did not load and is then put back to the content in force is
// reported too, with that content's Config and a nil error (nothing is
// applied). It runs on
// the Watcher's goroutine (or Reload's caller; with [InForce], also New's
// caller, before New returns, if the file changed since the Config was
// read) and must not call Reload or Close; it may call Config. A hook
// that panics changes nothing of the reload it reports: the panic and its
// stack are logged (Error, "config OnReload hook panicked"), and the
// Watcher's goroutine (with it the process) and Reload's caller, which
// gets the reload's outcome, go on.
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

// WithCheck sets a check that each new version of the file must pass,
// once it loads, before it is applied. A version the check refuses is
// handled as a file that does not load (see [Watcher.Reload] and
// [OnReload]): apply is not called, the rules in force keep running, and
// check's error, behind "reload: check <path>: ", goes to the OnReload
// hook (with a nil Config) and the logger ("config rejected"), and is
// Reload's error; found after a file event it is first given the grace
// ([WithGrace]), as a file cut short may load and fail the check (a
// route "POST /login" read as "POST /lo"), and reported once. The
// content in force (given to [InForce], or the file's at New) is not
// checked. A check that panics refuses the version: its error is "the
// check panicked: " and the panic's value (the stack is logged at Debug).
// check runs where apply does, before it, and must not call Reload or
// Close either.
//
// Its use is middleware.Middleware.CheckConfigRoutes, which checks the
// routes of a new version's policies against the router as
// CheckRoutes checks those in force at start, so that a reload naming
// a route the router does not have (a typo, "POST /logn") is refused,
// not applied as a limit that never applies:
//
//	reload.WithCheck(func(c *policy.Config) error { return m.CheckConfigRoutes(c, nil) })
func WithCheck(check func(*policy.Config) error) Option {
	return func(w *Watcher) error {
		if check == nil {
			return errors.New("reload: WithCheck: check is nil")
		}
		w.check = check
		return nil
	}
}

// WithDebounce sets how long the Watcher waits after the last change
// before it reloads (editors write a file in several steps); the default
// is [DefaultDebounce]. d must be positive: New fails otherwise. A writer
// that pauses longer than d while writing the file in place may have what
// it wrote so far applied (on Linux, if it closed the file before the pause
// or paused for longer than d and the grace together; see "Writing the
// file" in the package doc): a longer d bears longer pauses, and delays
// every reload as much.
func WithDebounce(d time.Duration) Option {
	return func(w *Watcher) error {
		if d <= 0 {
			return errors.New("reload: WithDebounce: duration must be positive")
		}
		w.debounce = d
		return nil
	}
}

// WithGrace sets how long a file that does not load, seen after a change,
// is given to be finished (a tool saving it may truncate it and then write
// it, or remove it and make it again) before its error is reported, and,
// on Linux, how long a file that loads but that its writer has not closed
// is given before it is applied (see "Writing the file" in the package
// doc); the default is [DefaultGrace]. d must be positive: New fails
// otherwise (Watcher.Reload gives no grace).
func WithGrace(d time.Duration) Option {
	return func(w *Watcher) error {
		if d <= 0 {
			return errors.New("reload: WithGrace: duration must be positive")
		}
		w.grace = d
		return nil
	}
}

// New returns a Watcher of the file at path that calls apply with each
// valid new version. The file is not applied at start (load it yourself to
// build the middleware); its content at New is remembered, so a reload that
// finds the same bytes does nothing. Pass the Config you loaded with
// [InForce] so that an edit made between loading it and New is applied
// too. The directory holding the file must exist. A path that is not a
// regular file (or a link to one) when it is read, such as a named pipe, is
// reported as a file that does not load. On Linux a Watcher holds two
// inotify instances, one for the file's events and one for its writers
// (see "Writing the file" in the package doc) and its writes through
// other names; when the second cannot be made, New logs a warning and the
// Watcher reads a file written in place as on other systems, and sees no
// write through another name. apply runs where the OnReload hook does,
// under the lock that serialises reloads: like the hook, it must not call
// Reload or Close (either would wait for it for ever: Reload for the lock,
// Close for the Watcher's goroutine, which runs apply or waits for the
// lock). To stop the Watcher or reload again from there, call them on a
// goroutine of their own (go w.Close()): they return once the reload under
// way has ended. An apply that panics fails the reload as one that returns
// an error does: the error, "reload: apply <path>: apply panicked: " and
// the panic's value, goes to the hook and is Reload's, the panic's stack is
// logged with it (Error, "config apply failed"), the version is not in
// force and Reload tries it again; the Watcher's goroutine (with it the
// process) and Reload's caller go on. What apply did before it panicked
// stays done.
func New(path string, apply func(*policy.Config) error, opts ...Option) (*Watcher, error) {
	if apply == nil {
		return nil, errors.New("reload: apply is nil")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("reload: %w", err)
	}
	w := &Watcher{path: abs, apply: apply, log: slog.Default(), debounce: DefaultDebounce, grace: DefaultGrace, clock: realClock{},
		done: make(chan struct{}), exited: make(chan struct{})}
	// Every refused option is reported, one per line.
	var errs []error
	for i, opt := range opts {
		if opt == nil {
			errs = append(errs, fmt.Errorf("reload: Options hold a nil Option at index %d", i))
		} else if err := opt(w); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errlist.Join(errs); err != nil {
		return nil, err
	}
	if w.inForce != nil {
		w.applied = w.inForce.Source()
		w.current.Store(w.inForce)
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
	if w.writes, err = newWriteWatch(); err != nil {
		// Files written in place are then read as they are once their
		// events stop, as on systems that do not tell of writers.
		w.log.LogAttrs(context.Background(), slog.LevelWarn, "ratekeeper: cannot watch the config file's writers",
			slog.String("file", w.path), slog.Any("error", err))
	}
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

// Close stops watching and waits for the Watcher's goroutines to return.
// It is idempotent; Reload still works after it.
func (w *Watcher) Close() error {
	var err error
	w.once.Do(func() {
		close(w.done)
		<-w.exited
		err = w.fw.Close()
		w.writes.close()
	})
	return err
}

// Config returns the configuration last applied by the Watcher (or given
// to [InForce]), or nil. It does not wait for a reload in progress: apply
// and the OnReload hook may call it (apply sees the Config still in force).
func (w *Watcher) Config() *policy.Config {
	return w.current.Load()
}

// loop turns file events into debounced reloads until Close.
func (w *Watcher) loop() {
	defer close(w.exited)
	timer := w.clock.NewTimer()
	defer timer.Stop()
	dataLink := filepath.Join(filepath.Dir(w.path), "..data")
	// held tells that the last reload found the file written and not
	// closed since, and gave it a grace: its writer's close is then the
	// file's last event, and wakes the Watcher (Linux). A close of a file
	// not held reads nothing: the writes before it have set the timer, or
	// the reload after them saw the close.
	held := false
	for {
		select {
		case <-w.done:
			return
		case ev, ok := <-w.fw.Events:
			if !ok {
				return
			}
			// Our file, a link on the way to the file it resolves to
			// (the "..data" link a Kubernetes ConfigMap volume swaps
			// under it is one), that file, or one of their directories.
			// Cleaned: inotify names an entry of a watch of "/" "//name".
			if name := filepath.Clean(ev.Name); name == w.path || name == dataLink || w.names[name] {
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
		case <-w.writes.written():
			// The file written through another name of it (Linux),
			// which raises no event in the directories watched.
			timer.Reset(w.debounce)
		case <-w.writes.closed():
			// A writer closed the file it wrote: read it one debounce
			// after, as after any event, not when the grace is over.
			if held {
				held = false
				timer.Reset(w.debounce)
			}
		case <-timer.C():
			w.follow()
			writing := w.writes.writing()
			retry, _ := w.reload(false, writing)
			if retry > 0 {
				timer.Reset(retry)
			}
			held = writing && retry > 0
			if w.tick != nil {
				w.tick()
			}
		}
	}
}

// follow finds what the file at w.path resolves to now and watches every
// directory whose entries decide it: the directory of each link met on the
// way (in the file's name or in the name of a directory above it; a link
// re-pointed is seen), of the file itself (saving it where it really is, say
// by renaming a new file over it, is seen), and, on Linux and Windows, the
// parents of those directories (a directory removed and made again is
// watched again). The
// watches of directories no longer on the way are removed. A directory
// that cannot be watched is logged and left out (one watched already,
// say no longer readable, keeps its watch, which goes on working); the
// directories are watched in the order of their names, so that those
// logged come in one order (a parent before the directories under it).
func (w *Watcher) follow() {
	names := resolve(w.path)
	w.writes.follow(names[len(names)-1])
	w.names = make(map[string]bool, 2*len(names))
	want := make(map[string]bool, 2*len(names))
	for _, name := range names {
		dir := filepath.Dir(name)
		w.names[name], w.names[dir] = true, true
		want[dir] = true
		if watchParents {
			want[filepath.Dir(dir)] = true
		}
	}
	// Watches are added first and those no longer needed removed after:
	// the directory above a missing one, watched for it, is needed still
	// while it is missing, though it is not in want. Each is added even
	// when the watch list has it: a directory removed stays on the list
	// until the watch's goroutine has read the removal, and one made again
	// under the same name is another directory; trusting the list, a
	// follow that ran first kept the dead watch, watched nothing above it,
	// and never saw the directory made again (adding a watch again costs
	// one system call).
	watched := w.fw.WatchList()
	keep := make(map[string]bool, len(want))
	for _, dir := range slices.Sorted(maps.Keys(want)) {
		for {
			err := w.fw.Add(dir)
			if err == nil || !errors.Is(err, fs.ErrNotExist) {
				if err != nil {
					w.log.LogAttrs(context.Background(), slog.LevelWarn, "ratekeeper: cannot watch a directory the config file's name goes through",
						slog.String("file", w.path), slog.String("dir", dir), slog.Any("error", err))
				}
				// A watch that cannot be added again (its directory no
				// longer readable) goes on working: it is kept.
				keep[dir] = err == nil || slices.Contains(watched, dir)
				break
			}
			// Missing: the nearest directory above it that exists sees it
			// made.
			w.names[dir] = true
			dir = filepath.Dir(dir)
		}
	}
	for _, dir := range watched {
		if !keep[dir] {
			_ = w.fw.Remove(dir) // gone already if the directory was removed
		}
	}
}

// watchParents tells whether follow watches the parents of the
// directories it watches: where a watch costs one descriptor per directory
// (inotify, ReadDirectoryChangesW), not one per file in it as with kqueue,
// where watching /etc would hold hundreds of descriptors open.
var watchParents = runtime.GOOS == "linux" || runtime.GOOS == "android" || runtime.GOOS == "windows"

// maxLinks bounds the links followed in resolving a name, as the kernel
// does (ELOOP).
const maxLinks = 40

// resolve returns the absolute path and every link met in resolving it,
// in any of its components, and the path it resolves to (a link's target,
// or as far as it resolves: a missing name whose making would matter).
func resolve(path string) []string {
	names := []string{path}
	resolved, todo := split(path)
	for links := 0; len(todo) > 0; {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			if err != nil {
				// Missing: the rest cannot be resolved.
				resolved = filepath.Join(append([]string{resolved}, todo...)...)
				todo = nil
			}
			continue
		}
		target, err := os.Readlink(next)
		if links++; err != nil || links > maxLinks {
			return append(names, next)
		}
		names = append(names, next)
		root, parts := split(target)
		if root != "" {
			resolved = root
		}
		todo = append(parts, todo...)
	}
	return append(names, resolved)
}

// split returns the root of path (its volume and separator; "" when path
// is relative) and its components.
func split(path string) (root string, parts []string) {
	vol := filepath.VolumeName(path)
	rest := path[len(vol):]
	if filepath.IsAbs(path) {
		root = vol + string(filepath.Separator)
		rest = rest[1:]
	}
	return root, strings.Split(rest, string(filepath.Separator))
}

// Reload reads the file now and, if its content changed since the last
// version applied, parses it, checks it ([WithCheck]) and calls apply. A
// file that does not load or that the check refuses changes nothing and
// returns the error (also passed to the OnReload hook and logged, at
// once: Reload gives it no grace); so does an error from
// apply. An error matching [policy.ErrRestartNeeded] is returned too, but
// the Config counts as applied ([Watcher.Config] returns it; logged as a
// warning). Unchanged content returns nil without calling apply, but for
// content whose apply failed: Reload calls apply for it again (a file event
// for it does not). Reload is safe to call from any goroutine, for example
// on SIGHUP.
func (w *Watcher) Reload() error {
	_, err := w.reload(true, false)
	return err
}

// reload is Reload; a file event's (explicit false) does not retry an
// apply that failed: a touch or chmod of the file raises events too. Nor
// does it report at once a file that does not load, or apply one that
// loads while its writer has it open (writing; see held): it returns how
// long to wait before reading it again, or 0.
func (w *Watcher) reload(explicit, writing bool) (retry time.Duration, _ error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	data, err := readFile(w.path)
	if err == nil && w.applied != nil && bytes.Equal(data, w.applied) && !(explicit && w.applyFailed) {
		w.holding = false
		if w.told(failKey(data, nil), explicit) {
			// This very content was refused last (the check, when
			// Reload retried its failed apply): a touch says nothing
			// again.
			return 0, nil
		}
		if w.loadFailed && w.applyFailed {
			// Back to a version whose apply failed, which was never in
			// force: its error stands again (Reload retries it).
			w.loadFailed = false
			w.log.LogAttrs(context.Background(), slog.LevelError, "ratekeeper: config back to a version whose apply failed; previous rules keep running",
				slog.String("file", w.path), slog.Any("error", w.applyErr))
			w.report(nil, w.applyErr)
			return 0, w.applyErr
		}
		if w.loadFailed {
			// The file is back to the content in force: the error
			// reported last is over.
			cfg := w.current.Load()
			if cfg == nil { // in force since New
				var err error
				if cfg, err = policy.ParseConfig(data, w.path); err != nil {
					// Taken for the content in force at New, but it does
					// not load: no restore, whatever rules are running.
					key := failKey(data, nil)
					if w.told(key, explicit) {
						return 0, err
					}
					return 0, w.rejected(err, key)
				}
			}
			w.loadFailed = false
			w.log.LogAttrs(context.Background(), slog.LevelInfo, "ratekeeper: config restored; the rules in force are unchanged",
				slog.String("file", w.path))
			w.report(cfg, nil)
		}
		return 0, nil
	}
	var cfg *policy.Config
	readErr := err
	if err == nil {
		cfg, err = policy.ParseConfig(data, w.path)
	}
	if err == nil && w.check != nil {
		// A version the check refuses is a file that does not load.
		if cerr := w.runCheck(cfg); cerr != nil {
			cfg, err = nil, fmt.Errorf("reload: check %s: %w", w.path, cerr)
		}
	}
	if err != nil {
		key := failKey(data, readErr)
		if w.told(key, explicit) {
			// A grace given meanwhile to other content is over too:
			// held must not take it up again later, with its time run
			// out.
			w.holding = false
			return 0, err
		}
		if !explicit {
			if retry := w.held(key, err); retry > 0 {
				return retry, err
			}
		}
		w.holding = false
		return 0, w.rejected(err, key)
	}
	if writing && !explicit {
		// Its writer may not have finished: what it wrote so far is
		// given the grace to be finished too.
		if retry := w.held("W"+string(data), errors.New("reload: the file is still open for writing")); retry > 0 {
			return retry, nil
		}
		w.log.LogAttrs(context.Background(), slog.LevelWarn, "ratekeeper: config applied while still open for writing; its grace is over",
			slog.String("file", w.path))
	}
	w.loadFailed, w.holding = false, false
	if err := w.runApply(cfg); errors.Is(err, policy.ErrRestartNeeded) {
		// The policies are in force; some other setting waits for a
		// restart.
		err = fmt.Errorf("reload: apply %s: %w", w.path, err)
		w.applied, w.applyFailed = data, false
		w.current.Store(cfg)
		w.log.LogAttrs(context.Background(), slog.LevelWarn, "ratekeeper: config reloaded; some settings take effect only at restart",
			slog.String("file", w.path), slog.Int("policies", len(cfg.Policies)), slog.Any("error", err))
		w.report(cfg, err)
		return 0, err
	} else if err != nil {
		p, _ := err.(*panicked)
		err = fmt.Errorf("reload: apply %s: %w", w.path, err)
		attrs := []slog.Attr{slog.String("file", w.path), slog.Any("error", err)}
		if p != nil {
			attrs = append(attrs, slog.String("stack", p.stack))
		}
		w.log.LogAttrs(context.Background(), slog.LevelError, "ratekeeper: config apply failed", attrs...)
		// Not retried on file events until the file changes again;
		// Reload retries it.
		w.applied, w.applyFailed, w.applyErr = data, true, err
		w.report(nil, err)
		return 0, err
	}
	w.applied, w.applyFailed = data, false
	w.current.Store(cfg)
	w.log.LogAttrs(context.Background(), slog.LevelInfo, "ratekeeper: config reloaded",
		slog.String("file", w.path), slog.Int("policies", len(cfg.Policies)))
	w.report(cfg, nil)
	return 0, nil
}

// runCheck returns check's verdict on cfg; a panic of check is its
// refusal: nothing has been applied yet, and the Watcher's goroutine
// (with it the process) or Reload's caller goes on. The refusal is
// reported as any other (once); the panic's stack is logged at Debug
// each time. runCheck requires that w.mu is held.
func (w *Watcher) runCheck(cfg *policy.Config) (err error) {
	defer func() {
		if v := recover(); v != nil {
			w.log.LogAttrs(context.Background(), slog.LevelDebug, "ratekeeper: config check panicked",
				slog.String("file", w.path), slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
			err = fmt.Errorf("the check panicked: %v", v)
		}
	}()
	return w.check(cfg)
}

// held tells whether a file that does not load, or that loads but whose
// writer has not closed it (Linux), found by a file event's reload, is
// still in its grace: a tool saving the file may have truncated it or
// removed it and not written it yet, or paused mid-file. The grace runs
// from the first reload that found it so (key; a file that changes but is
// still so starts it again, as it is still being written); held returns
// how long it has left, or 0 once it is over. held requires that w.mu is
// held.
func (w *Watcher) held(key string, err error) time.Duration {
	now := w.clock.Now()
	if !w.holding || key != w.heldKey {
		w.holding, w.heldKey, w.heldSince = true, key, now
	}
	left := w.grace - now.Sub(w.heldSince)
	if left > 0 {
		w.log.LogAttrs(context.Background(), slog.LevelDebug, "ratekeeper: config not finished yet; reading it again before acting on it",
			slog.String("file", w.path), slog.Duration("in", left), slog.Any("error", err))
		return left
	}
	return 0
}

// failKey tells apart what reloads found: the error of a file that could
// not be read, or the content of one that does not load.
func failKey(data []byte, readErr error) string {
	if readErr != nil {
		return "E" + readErr.Error()
	}
	return "D" + string(data)
}

// told reports whether a file event's reload (explicit false) found what
// the last rejection reported (key: its failKey): a touch or chmod of the
// file, which says nothing again.
func (w *Watcher) told(key string, explicit bool) bool {
	return !explicit && w.loadFailed && key == w.failKey
}

// rejected logs and reports err, the error of a file that does not load
// (key: its failKey), whose previous rules keep running, and returns it.
func (w *Watcher) rejected(err error, key string) error {
	w.loadFailed, w.failKey = true, key
	w.log.LogAttrs(context.Background(), slog.LevelError, "ratekeeper: config rejected; previous rules keep running",
		slog.String("file", w.path), slog.Any("error", err))
	w.report(nil, err)
	return err
}

// runApply returns apply's error for cfg, or a *panicked for a panic of
// apply: a reload whose apply panics fails as one whose apply returns an
// error does (the version is not in force, Reload tries it again), and the
// Watcher's goroutine (with it the process) or Reload's caller goes on.
// Whatever apply did before it panicked stays done. runApply requires
// that w.mu is held.
func (w *Watcher) runApply(cfg *policy.Config) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &panicked{msg: fmt.Sprintf("apply panicked: %v", v), stack: string(debug.Stack())}
		}
	}()
	return w.apply(cfg)
}

// panicked is the error of an apply that panicked: the panic's value, and
// the stack it panicked with, which is logged.
type panicked struct{ msg, stack string }

func (p *panicked) Error() string { return p.msg }

// report calls the OnReload hook, if any, with cfg and err. A hook that
// panics changes nothing of the reload it reports: the panic is logged at
// Error with its stack, and the Watcher's goroutine (with it the process)
// or Reload's caller goes on. report requires that w.mu is held.
func (w *Watcher) report(cfg *policy.Config, err error) {
	if w.hook == nil {
		return
	}
	defer func() {
		if v := recover(); v != nil {
			w.log.LogAttrs(context.Background(), slog.LevelError, "ratekeeper: config OnReload hook panicked",
				slog.String("file", w.path), slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
		}
	}()
	w.hook(cfg, err)
}

// readFile reads at most maxFile+1 bytes of the file at path. A path that
// is not a regular file (a named pipe, which would block the read until a
// writer came, a device, a directory) is refused before it is opened, and
// again, for one swapped in meanwhile, once it is.
func readFile(path string) ([]byte, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("reload: %w", err)
	} else if !fi.Mode().IsRegular() {
		return nil, notRegular(path, fi)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reload: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, fmt.Errorf("reload: %w", err)
	} else if !fi.Mode().IsRegular() {
		return nil, notRegular(path, fi)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("reload: %s: %w", path, err)
	}
	return data, nil
}

// notRegular is readFile's error for a path that is not a regular file.
func notRegular(path string, fi fs.FileInfo) error {
	return fmt.Errorf("reload: %s is not a regular file (mode %v)", path, fi.Mode().Type())
}

// clock is the time of a Watcher: the real one but in tests.
type clock interface {
	Now() time.Time
	// NewTimer returns a stopped timer.
	NewTimer() timer
}

// timer is the part of a *time.Timer a Watcher uses.
type timer interface {
	C() <-chan time.Time
	Reset(d time.Duration)
	Stop()
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer() timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return realTimer{t}
}

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time   { return t.t.C }
func (t realTimer) Reset(d time.Duration) { t.t.Reset(d) }
func (t realTimer) Stop()                 { t.t.Stop() }
