package reload

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// writeWatch tells whether the file a Watcher reads has been written and
// not closed since by its writer, which fsnotify does not report: an
// inotify instance of its own watches the file's directory for the file's
// writes (IN_MODIFY) and its writers' closes (IN_CLOSE_WRITE), and the file
// itself for the same: a write through another name of the file (the
// host's, for a file bind-mounted into a container; another hard link) is
// told to the watches of the file and of the directory of that name, never
// to those of the Watcher's directories. The
// instance is non-blocking. A goroutine of its own reads it as its events
// come (so that the events of other files in the directory do not fill its
// queue), sends on closes when a writer closes the file it wrote, and on
// writes when the file is written through another name; the
// Watcher's goroutine reads it too, before each reload, without waiting: a
// reload then knows every write queued before it read the file. follow and
// writing run on the Watcher's goroutine (or in New, before it starts);
// close after it has returned.
type writeWatch struct {
	fd     int
	file   *os.File      // fd, in the runtime's poller: its reader waits there, and Close wakes it
	closes chan struct{} // a writer closed the file it wrote; holds one at most
	writes chan struct{} // the file was written through another name; holds one at most
	exited chan struct{} // closed when the reader returns

	mu   sync.Mutex // guards the reads of fd and what follows
	wd   int        // the watch of dir, or -1
	fwd  int        // the watch of the file itself, or -1
	dir  string     // the directory of the file the path resolves to
	name string     // its name in dir
	open bool       // written since a writer last closed it (or it was made, removed, renamed)
	// told: the event taken in last was a write of the file through its
	// name, which fsnotify tells the Watcher too; the kernel queues the
	// file's own event of that write right after it.
	told bool
	buf  []byte
}

// writeMask is what writeWatch hears of a directory: its files' writes,
// their writers' closes, and the changes of the entries that make a name
// another file.
const writeMask = syscall.IN_MODIFY | syscall.IN_CLOSE_WRITE | syscall.IN_CREATE | syscall.IN_DELETE |
	syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_ONLYDIR

// fileMask is what writeWatch hears of the file itself.
const fileMask = syscall.IN_MODIFY | syscall.IN_CLOSE_WRITE

// newWriteWatch returns a writeWatch, its reader started, or an error if
// the inotify instance cannot be made (its user's limit of instances, or
// of descriptors).
func newWriteWatch() (*writeWatch, error) {
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	ww := &writeWatch{fd: fd, file: os.NewFile(uintptr(fd), "inotify"), closes: make(chan struct{}, 1),
		writes: make(chan struct{}, 1), exited: make(chan struct{}), wd: -1, fwd: -1, buf: make([]byte, 16*(syscall.SizeofInotifyEvent+syscall.NAME_MAX+1))}
	rc, err := ww.file.SyscallConn()
	if err != nil {
		ww.file.Close()
		return nil, err
	}
	go func() {
		defer close(ww.exited)
		// Drains the queue each time the poller says events came, until
		// close closes the file (or, were fd not in the poller, at once:
		// closes then come at no reload's wake-up, as before).
		_ = rc.Read(func(uintptr) bool {
			ww.mu.Lock()
			defer ww.mu.Unlock()
			ww.drain()
			return false
		})
	}()
	return ww, nil
}

// follow makes file the one watched for writers. A file other than the
// last one followed (another name, or a directory removed and made again)
// is taken as closed: its writers are not known.
func (ww *writeWatch) follow(file string) {
	if ww == nil {
		return
	}
	ww.mu.Lock()
	defer ww.mu.Unlock()
	ww.drain()
	dir, name := filepath.Dir(file), filepath.Base(file)
	same := dir == ww.dir && name == ww.name
	wd, err := syscall.InotifyAddWatch(ww.fd, dir, writeMask)
	switch {
	case errors.Is(err, syscall.EACCES) && dir == ww.dir:
		// No longer readable: inotify cannot watch it again, but a
		// watch of it goes on working, and is kept.
		wd = ww.wd
	case err != nil:
		wd = -1 // a missing directory: no writer to wait for
	}
	if wd != ww.wd && ww.wd >= 0 {
		_, _ = syscall.InotifyRmWatch(ww.fd, uint32(ww.wd)) // gone already if its directory was removed
	}
	if wd != ww.wd || dir != ww.dir || name != ww.name {
		ww.open = false
	}
	ww.wd, ww.dir, ww.name = wd, dir, name
	// The file itself: the file now under the name (a file renamed over
	// it is another, watched anew; the watch of the one replaced, still
	// linked elsewhere, would stay).
	fwd, err := syscall.InotifyAddWatch(ww.fd, file, fileMask)
	switch {
	case errors.Is(err, syscall.EACCES) && same:
		// No longer readable: inotify cannot watch it again, but a watch
		// of it goes on working, and is kept.
		fwd = ww.fwd
	case err != nil:
		fwd = -1 // missing: the directory's watch sees it made
	}
	if fwd != ww.fwd && ww.fwd >= 0 {
		_, _ = syscall.InotifyRmWatch(ww.fd, uint32(ww.fwd)) // gone already if the file was
	}
	ww.fwd = fwd
}

// writing reports whether the file followed has been written and not
// closed since by a writer, as far as the events queued by now tell.
func (ww *writeWatch) writing() bool {
	if ww == nil {
		return false
	}
	ww.mu.Lock()
	defer ww.mu.Unlock()
	ww.drain()
	return ww.open
}

// written returns the channel on which a write of the file through
// another name is told (nil without a writeWatch): it raises no fsnotify
// event in the Watcher's directories.
func (ww *writeWatch) written() <-chan struct{} {
	if ww == nil {
		return nil
	}
	return ww.writes
}

// closed returns the channel on which a writer's close of the file it
// wrote is told (nil without a writeWatch: no close is ever told).
func (ww *writeWatch) closed() <-chan struct{} {
	if ww == nil {
		return nil
	}
	return ww.closes
}

// drain reads the events queued, without waiting for more. drain requires
// that ww.mu is held.
func (ww *writeWatch) drain() {
	for {
		n, err := syscall.Read(ww.fd, ww.buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || n <= 0 {
			return // EAGAIN: none left
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			wd := int32(binary.NativeEndian.Uint32(ww.buf[off:]))
			mask := binary.NativeEndian.Uint32(ww.buf[off+4:])
			size := int(binary.NativeEndian.Uint32(ww.buf[off+12:]))
			off += syscall.SizeofInotifyEvent
			name := strings.TrimRight(string(ww.buf[off:min(off+size, n)]), "\x00")
			off += size
			ww.event(int(wd), mask, name)
		}
	}
}

// event takes in one event of the watch wd on the entry name. event
// requires that ww.mu is held.
func (ww *writeWatch) event(wd int, mask uint32, name string) {
	told := ww.told
	ww.told = false
	switch {
	case mask&syscall.IN_Q_OVERFLOW != 0:
		ww.open = false // events lost: the writer's close may be among them
	case wd == ww.fwd && ww.fwd >= 0 && name == "": // not an entry's, were the file a directory
		switch {
		case mask&syscall.IN_IGNORED != 0:
			ww.fwd = -1 // the file is gone
		case mask&syscall.IN_MODIFY != 0:
			ww.open = true
			if !told { // through another name: fsnotify saw nothing
				tell(ww.writes)
			}
		case mask&syscall.IN_CLOSE_WRITE != 0:
			ww.closedWriter()
		}
	case wd != ww.wd || ww.wd < 0:
	case mask&syscall.IN_IGNORED != 0:
		ww.wd, ww.open = -1, false // the directory is gone
	case name != ww.name:
	case mask&syscall.IN_MODIFY != 0:
		ww.open, ww.told = true, true
	case mask&syscall.IN_CLOSE_WRITE != 0:
		ww.closedWriter()
	default:
		ww.open = false // another file under the name
	}
}

// closedWriter takes in a writer's close of the file. closedWriter
// requires that ww.mu is held.
func (ww *writeWatch) closedWriter() {
	if ww.open {
		ww.open = false
		tell(ww.closes)
	}
}

// tell sends on c, which holds one at most, unless it holds one already
// (told, not taken yet).
func tell(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// close releases the inotify instance and waits for its reader to return.
func (ww *writeWatch) close() {
	if ww != nil {
		ww.file.Close()
		<-ww.exited
	}
}
