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
// a shell redirection. For a regular file (or one yet to be made) the
// check makes a temporary file beside it and removes it at once: nothing
// is left there while the command runs, for an interrupted run to leave
// behind. Call Discard when no output is written after all.
func New(flag, path string) (*File, error) {
	if err := CheckPath(flag, path); err != nil {
		return nil, err
	}
	fi, err := os.Stat(path)
	if err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s %s: is a directory", flag, path)
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
			return nil, fmt.Errorf("%s %s: %w", flag, path, err)
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
	f, err := o.temp()
	if err != nil {
		return nil, err
	}
	f.Close()
	os.Remove(f.Name())
	return o, nil
}

// NewTemp returns where an output goes that is a new file in the
// temporary directory, named as os.CreateTemp names one from pattern
// ("ratekeeper-demo-*.svg"): a file of the command's own, never one at a
// fixed name that someone else could have put there. The file is made
// when the output is written, not before: a run that fails, or is killed
// before then (by SIGPIPE: "ratekeeper demo | head -1"), leaves nothing
// in the directory. The check that the directory takes a file is made at
// once, by making one and removing it. Path names the file once written.
func NewTemp(pattern string) (*File, error) {
	dir := os.TempDir()
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, err
	}
	f.Close()
	os.Remove(f.Name())
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

// linkTarget follows the symlinks at path, the last element only, to the
// path they end at, which need not exist: path itself when it is no link.
func linkTarget(path string) string {
	for range 40 { // the links Linux follows before it gives up (ELOOP)
		dest, err := os.Readlink(path)
		if err != nil {
			break // no link (or not one that can be read)
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
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
	prefix := filepath.Join(filepath.Dir(o.target), "."+filepath.Base(o.target)+".")
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
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, fmt.Errorf("%s %s: %w", o.flag, o.path, err)
		}
		return f, nil
	}
}

// Write writes the output with write into the target, for a regular file
// through a temporary one renamed over it once write and the close have
// succeeded (removed otherwise: the target stays as it was); for NewTemp
// into the new file, removed when write or the close fails.
func (o *File) Write(write func(io.Writer) error) error {
	if o.f != nil {
		err := write(o.f)
		if o.std {
			return err
		}
		if cerr := o.f.Close(); err == nil {
			err = cerr
		}
		o.f = nil
		return err
	}
	if o.pattern != "" {
		f, err := os.CreateTemp(o.dir, o.pattern)
		if err != nil {
			return err
		}
		err = write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(f.Name())
			return err
		}
		o.path = f.Name()
		return nil
	}
	f, err := o.temp()
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), o.target)
	}
	if err != nil {
		os.Remove(f.Name())
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
