package outfile

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// endingSignals are the signals that end a command at a terminal (Ctrl-C,
// a closed terminal) or under a service manager, which Write handles
// while it writes, and then ends the command by.
var endingSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// A writeGuard removes a temporary file when the command is ended by one
// of endingSignals while an output is written, and then ends the command
// by that signal, as it would have ended; or holds the signal while a
// copy in place is made, which it must not cut short.
type writeGuard struct {
	mu      sync.Mutex
	remove  string    // removed on a signal; "" once renamed or kept
	holding bool      // a copy in place runs: a signal waits in held
	held    os.Signal // the first signal held
	c       chan os.Signal
	done    chan struct{} // closed by stop
	exited  chan struct{} // closed when watch returns
}

// guard starts a writeGuard for the temporary file name ("" for one
// yet to be made, by create). The signals the command ignores (started
// with nohup, or in the background by a shell without job control) stay
// ignored.
func guard(name string) *writeGuard {
	g := &writeGuard{remove: name, c: make(chan os.Signal, 1), done: make(chan struct{}), exited: make(chan struct{})}
	var sigs []os.Signal
	for _, s := range endingSignals {
		if !signal.Ignored(s) {
			sigs = append(sigs, s)
		}
	}
	if len(sigs) == 0 {
		close(g.exited)
		return g
	}
	signal.Notify(g.c, sigs...)
	go g.watch()
	return g
}

// watch ends the command on a signal, unless a copy in place is running.
func (g *writeGuard) watch() {
	defer close(g.exited)
	for {
		select {
		case <-g.done:
			return
		case s := <-g.c:
			g.mu.Lock()
			if g.holding {
				if g.held == nil {
					g.held = s
				}
				g.mu.Unlock()
				continue
			}
			g.end(s) // with g.mu held: no rename starts
		}
	}
}

// end removes the temporary file, if any, and ends the command by the
// signal s. It does not return.
func (g *writeGuard) end(s os.Signal) {
	if g.remove != "" {
		os.Remove(g.remove)
	}
	signal.Stop(g.c) // the signal's default action again: end the process
	if p, err := os.FindProcess(os.Getpid()); err == nil && p.Signal(s) == nil {
		time.Sleep(time.Second) // delivered at once; a bound, should it be not
	}
	code := 1
	if n, ok := s.(syscall.Signal); ok {
		code = 128 + int(n) // as a shell reports a command a signal ended
	}
	os.Exit(code)
}

// create makes the temporary file with makeFile, holding the lock a signal
// takes before it ends the command: the signal finds the file not yet
// made, or made and to be removed, never made and not known. The file is
// removed on a signal from then on.
func (g *writeGuard) create(makeFile func() (*os.File, error)) (*os.File, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f, err := makeFile()
	if err == nil {
		g.remove = f.Name()
	}
	return f, err
}

// drop removes the temporary file now, unless a signal is removing it.
func (g *writeGuard) drop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.remove != "" {
		os.Remove(g.remove)
		g.remove = ""
	}
}

// hold runs copy, holding the signals that come meanwhile until it
// returns; then ends the command by the first of them, if one came.
func (g *writeGuard) hold(copy func() error) error {
	g.mu.Lock()
	g.holding = true
	g.mu.Unlock()
	err := copy()
	g.mu.Lock()
	g.holding = false
	if g.held != nil {
		g.end(g.held)
	}
	g.mu.Unlock()
	return err
}

// rename renames the temporary file from over to, unless a signal is
// ending the command: a signal then finds the file renamed (nothing to
// remove) or not yet (removed).
func (g *writeGuard) rename(from, to string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	err := os.Rename(from, to)
	if err == nil {
		g.remove = ""
	}
	return err
}

// keep keeps the temporary file: it is the output, no longer removed on
// a signal.
func (g *writeGuard) keep() {
	g.mu.Lock()
	g.remove = ""
	g.mu.Unlock()
}

// stop ends the guard; a signal that came and was not acted on yet ends
// the command now.
func (g *writeGuard) stop() {
	signal.Stop(g.c)
	select {
	case <-g.done:
		return // stopped already
	default:
	}
	close(g.done)
	<-g.exited
	select {
	case s := <-g.c:
		g.mu.Lock()
		g.end(s)
	default:
	}
}
