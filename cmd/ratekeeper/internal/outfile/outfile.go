// Package outfile writes the files that the command's flags name (a
// chart, a profile) whole or not at all: a run that fails, or is
// interrupted, leaves the file there as it was, or none.
package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"unicode/utf8"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/quote"
)

// A File is where an output goes: a temporary file beside its target,
// made when the output is written and renamed over the target, or, for a
// target that is not a regular file (a device such as /dev/stdout or
// /dev/null, a named pipe), the target itself, opened for writing, and for
// the file standard output or error is redirected to, that stream; or,
// from NewTemp, a new file in the temporary directory.
type File struct {
	f      *os.File // the target, opened; nil for a regular file
	std    bool     // f is the process's standard output or error: written, never closed
	flag   string   // the flag that names the file, for the errors
	path   string   // as given, for the errors; for NewTemp, the file made, once written
	target string   // the file renamed over; "" when f is the target
	// dir and pattern make a new file in the temporary directory
	// (NewTemp) when written; "" otherwise.
	dir, pattern string
}

// New checks that an output can be written for path, named by flag
// ("--svg"), and returns where it goes; the errors name the flag and the
// path. A symlink at path stays: the file it names is the target, as for
// a shell redirection. A file its user may not write is refused, as by a
// shell redirection. For a regular file (or one yet to be made) the
// check makes a temporary file beside it (or, for a file in a directory
// its user may not write, in the temporary directory; see Write) and
// removes it at once: nothing is left there while the command runs, for
// an interrupted run to leave behind. An interrupt (or SIGTERM, SIGHUP)
// that comes meanwhile removes it too, and ends the command by that
// signal, as Write does. Call Discard when no output is written after
// all.
func New(flag, path string) (*File, error) {
	if err := CheckPath(flag, path); err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s %s: is a directory", flag, quote.IfNeeded(path))
	}
	if err == nil && fi.Mode().IsRegular() {
		// Standard output or error redirected to a file, and named
		// (/dev/stdout, /dev/fd/1, or that file's own name): written
		// through it, after what the command and the shell put there.
		// Renamed over, the file would lose both, and the command's
		// later output would go to the file replaced.
		for _, std := range []*os.File{os.Stdout, os.Stderr} {
			if si, err := std.Stat(); err == nil && os.SameFile(fi, si) {
				return &File{f: std, std: true, flag: flag, path: path}, nil
			}
		}
	}
	if err == nil && !fi.Mode().IsRegular() {
		// Renaming over a device or a pipe would replace it.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", flag, quote.IfNeeded(path), quotePath(err))
		}
		return &File{f: f, flag: flag, path: path}, nil
	}
	target := path
	if real, err := filepath.EvalSymlinks(path); err == nil {
		target = real
	} else {
		target = linkTarget(path) // a link to a file yet to be made
	}
	o := &File{flag: flag, path: path, target: target}
	if err := o.writable(); err != nil {
		return nil, err
	}
	g := guard("")
	defer g.stop()
	f, err := g.create(func() (*os.File, error) {
		f, _, err := o.tempFile()
		return f, err
	})
	if err != nil {
		return nil, err
	}
	madeTemp(f.Name())
	f.Close()
	g.drop()
	return o, nil
}

// NewTemp returns where an output goes that is a new file in the
// temporary directory, named as os.CreateTemp names one from pattern
// ("ratekeeper-demo-*.svg"): a file of the command's own, never one at a
// fixed name that someone else could have put there. The file is made
// when the output is written, not before: a run that fails, or is killed
// before then (by SIGPIPE: "ratekeeper demo | head -1"), leaves nothing
// in the directory. The check that the directory takes a file is made at
// once, by making one and removing it; its error names the directory.
// Path names the file once written.
func NewTemp(pattern string) (*File, error) {
	dir := os.TempDir()
	g := guard("")
	defer g.stop()
	f, err := g.create(func() (*os.File, error) { return os.CreateTemp(dir, pattern) })
	if err != nil {
		// The directory, not the name of a file the user never named.
		return nil, fmt.Errorf("the temporary directory %s: %w", quote.IfNeeded(dir), unwrapPath(err))
	}
	madeTemp(f.Name())
	f.Close()
	g.drop()
	return &File{dir: dir, pattern: pattern}, nil
}

// Path returns the path of the output: as given to New, or for NewTemp
// the file made, once Write has made it ("" before).
func (o *File) Path() string { return o.path }

// CheckPath refuses "-" as an output path, named by flag: where check's
// "-" reads standard input, an output flag would write a file named "-"
// in the working directory, which a user who meant standard output would
// not find. /dev/stdout names standard output, as for any program.
func CheckPath(flag, path string) error {
	if path == "-" {
		return fmt.Errorf("%s -: would write a file named \"-\"; give a file name, or /dev/stdout for standard output", flag)
	}
	return nil
}

// tempMadeHook, set by the tests only, is called by madeTemp with the
// name of each temporary file (or probe) as soon as it is made: the point
// where a test sends a signal that must find the file guarded.
var tempMadeHook func(name string)

// madeTemp calls tempMadeHook, if set, with name.
func madeTemp(name string) {
	if tempMadeHook != nil {
		tempMadeHook(name)
	}
}

// linkTarget follows the symlinks at path, the last element only, to the
// path they end at, which need not exist: path itself when it is no link.
// A link's relative target is taken from the directory the link is in,
// its symlinks resolved first, as the system takes it: "../charts/x.svg"
// in dirlink/, a link to real/sub/, is real/charts/x.svg, not charts/x.svg.
func linkTarget(path string) string {
	for range 40 { // the links Linux follows before it gives up (ELOOP)
		dest, err := os.Readlink(path)
		if err != nil {
			break // no link (or not one that can be read)
		}
		if !filepath.IsAbs(dest) {
			dir := filepath.Dir(path)
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			dest = filepath.Join(dir, dest)
		}
		path = dest
	}
	return path
}

// temp makes the temporary file beside the target, with the permissions
// of the target, or for a new one those os.Create gives (0666 less the
// umask), as a shell's redirection gives.
func (o *File) temp() (*os.File, error) {
	perm, kept := os.FileMode(0o666), false
	if fi, err := os.Stat(o.target); err == nil {
		perm, kept = fi.Mode().Perm(), true
	}
	prefix := filepath.Join(filepath.Dir(o.target), "."+tempBase(filepath.Base(o.target))+".")
	for try := 0; ; try++ {
		f, err := os.OpenFile(prefix+strconv.FormatUint(rand.Uint64(), 36), os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		if err == nil && kept {
			// The umask took bits of the target's permissions.
			if err = f.Chmod(perm); err != nil {
				f.Close()
				os.Remove(f.Name())
			}
		}
		if err != nil {
			// The reason, not the name of a temporary file the user
			// never named.
			return nil, fmt.Errorf("%s %s: %w", o.flag, quote.IfNeeded(o.path), unwrapPath(err))
		}
		return f, nil
	}
}

// maxTempBase is the most of the target's name a temporary file's name
// holds: with the dot before it, the dot after and up to 13 characters
// of a random number, the name is at most 255 bytes, the most a file
// system takes (Linux, macOS, Windows).
const maxTempBase = 255 - 2 - 13

// tempBase returns the target's name base as the temporary file's name
// holds it: cut to at most maxTempBase bytes, at the start of a
// character (macOS takes only UTF-8 names).
func tempBase(base string) string {
	if len(base) <= maxTempBase {
		return base
	}
	n := maxTempBase
	for n > 0 && !utf8.RuneStart(base[n]) {
		n--
	}
	return base[:n]
}

// Write writes the output with write into the target. For a regular file
// it writes a temporary file beside it and, once write, a sync and the
// close have succeeded, renames it over the target (or removes it: the
// target stays as it was). A target that has other hard links, or an
// owner or group the new file cannot be given, is instead written in
// place, by copying the finished temporary file into it: a rename would
// leave the other names with the old output, or give the file to the user
// running the command. So is a file its user may write in a directory the
// user may not (the temporary file then made in the temporary directory),
// and a mount point (a file bind-mounted, as a container's single-file
// volume), which a rename cannot replace.
// A target its user may not write is refused, as by a shell's redirection
// (a rename over it would succeed in a directory the user may write). For
// NewTemp it writes into the new file, removed when write or the close
// fails.
//
// While it writes, from the moment the temporary file is made, an
// interrupt (SIGINT, Ctrl-C), SIGTERM or SIGHUP removes the temporary
// file and then ends the command by that signal, as it would have ended:
// the target is left as it was, or replaced whole.
// During a copy in place the signal waits until the copy is done.
func (o *File) Write(write func(io.Writer) error) error {
	if o.f != nil {
		err := write(o.f)
		if o.std {
			return quotePath(err)
		}
		if cerr := o.f.Close(); err == nil {
			err = cerr
		}
		o.f = nil
		return quotePath(err)
	}
	if o.pattern != "" {
		g := guard("")
		defer g.stop()
		f, err := g.create(func() (*os.File, error) { return os.CreateTemp(o.dir, o.pattern) })
		if err != nil {
			return quotePath(err)
		}
		madeTemp(f.Name())
		err = write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.Name())
			return quotePath(err)
		}
		g.keep()
		o.path = f.Name()
		return nil
	}
	if err := o.writable(); err != nil {
		return err
	}
	g := guard("")
	defer g.stop()
	var inPlace bool
	f, err := g.create(func() (f *os.File, err error) {
		f, inPlace, err = o.tempFile()
		return f, err
	})
	if err != nil {
		return err
	}
	madeTemp(f.Name())
	defer os.Remove(f.Name()) // after a rename, no file of that name
	err = write(f)
	if err == nil && !inPlace {
		err = f.Sync() // the data on disk before the name: a crash leaves the old file or the new one
	}
	if err == nil && !inPlace {
		inPlace = o.keepsOnlyInPlace(f)
	}
	if err == nil && inPlace {
		err = g.hold(func() error { return copyInto(o.target, f) })
		if err != nil {
			err = fmt.Errorf("%s %s: writing it in place (the file may be incomplete): %w", o.flag, quote.IfNeeded(o.path), unwrapPath(err))
		}
	}
	var kept *os.File
	if err == nil && !inPlace {
		// For a copy into a mount point, should the rename fail: the
		// file, made with the target's mode, may be one its user may
		// not open again (0200).
		if kept = dup(f); kept != nil {
			defer kept.Close()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && !inPlace {
		err = g.rename(f.Name(), o.target)
		if errors.Is(err, syscall.EBUSY) || errors.Is(err, syscall.EXDEV) {
			// A mount point (a file bind-mounted: a container's
			// single-file volume), which no rename replaces.
			err = g.hold(func() error {
				if kept != nil {
					return copyInto(o.target, kept)
				}
				return copyFileInto(o.target, f.Name())
			})
			if err != nil {
				err = fmt.Errorf("%s %s: writing it in place (the file may be incomplete): %w", o.flag, quote.IfNeeded(o.path), unwrapPath(err))
			}
		} else if err != nil {
			err = fmt.Errorf("%s %s: %w", o.flag, quote.IfNeeded(o.path), unwrapPath(err))
		}
	}
	return err
}

// copyFileInto writes the whole of the file at from into the file at
// target, truncated first.
func copyFileInto(target, from string) error {
	f, err := os.Open(from)
	if err != nil {
		return err
	}
	defer f.Close()
	return copyInto(target, f)
}

// tempFile makes the temporary file the output is written to: beside
// the target; or, when the target's directory takes no new file of its
// user but the target is a file the user may write (checked by
// writable), in the temporary directory, to be copied into the target
// (staged is true).
func (o *File) tempFile() (f *os.File, staged bool, err error) {
	f, err = o.temp()
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		return f, false, err
	}
	if fi, serr := os.Stat(o.target); serr != nil || !fi.Mode().IsRegular() {
		return nil, false, err
	}
	s, serr := os.CreateTemp("", "ratekeeper-output-*")
	if serr != nil {
		return nil, false, err // the directory's error, the one that matters
	}
	return s, true, nil
}

// writable returns an error naming the flag and the path when the
// target is a file that exists and its user may not write, found by
// opening it for writing (not truncated: nothing is written), which the
// system answers as for a shell's redirection; nil otherwise.
func (o *File) writable() error {
	f, err := os.OpenFile(o.target, os.O_WRONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a file to be made
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", o.flag, quote.IfNeeded(o.path), unwrapPath(err))
	}
	f.Close()
	return nil
}

// keepsOnlyInPlace reports whether the target, if it exists, is a file
// that only a copy in place keeps as it is: one with other hard links, or
// of an owner and group that the temporary file f (made with the
// target's permissions) cannot be given.
func (o *File) keepsOnlyInPlace(f *os.File) bool {
	ti, err := os.Stat(o.target)
	if err != nil {
		return false
	}
	links, uid, gid, ok := ownership(ti)
	if !ok {
		return false // no such details here: replaced, as before
	}
	if links > 1 {
		return true
	}
	fi, err := f.Stat()
	if err != nil {
		return true
	}
	_, fuid, fgid, _ := ownership(fi)
	if fuid == uid && fgid == gid {
		return false
	}
	return f.Chown(uid, gid) != nil
}

// copyInto writes the whole of f into the file at target, truncated first.
func copyInto(target string, f *os.File) error {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	t, err := os.OpenFile(target, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = io.Copy(t, f)
	if err == nil {
		err = t.Sync()
	}
	if cerr := t.Close(); err == nil {
		err = cerr
	}
	return err
}

// quotePath returns err, when it is an error of the os package naming a
// file (write /dev/full: no space left on device), with the file's name
// written as quote.IfNeeded writes it: a name holding a newline would add
// a line of its own to the error, an escape (ESC) reach the terminal.
// Another error is returned as it is.
func quotePath(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return &fs.PathError{Op: pe.Op, Path: quote.IfNeeded(pe.Path), Err: pe.Err}
	}
	return err
}

// unwrapPath returns the reason of a *fs.PathError or *os.LinkError, not
// the names of files (a temporary one the user never named); err itself
// otherwise.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// Discard closes a target opened and not written (a device, a pipe); for
// a regular file there is nothing to undo. It may be called after Write.
func (o *File) Discard() {
	if o.f != nil && !o.std {
		o.f.Close()
		o.f = nil
	}
}
