//go:build unix

package outfile

import (
	"os"
	"syscall"
)

// dup returns a second descriptor of the open file f, which stays open
// when f is closed, or nil when the system gives none. Unlike opening the
// file again by its name, it needs no permission the file's mode may not
// give (a file of mode 0200 opened for reading).
func dup(f *os.File) *os.File {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	nfd := -1
	rc.Control(func(fd uintptr) {
		// Not inherited by a process started meanwhile, as os.Open's.
		syscall.ForkLock.RLock()
		defer syscall.ForkLock.RUnlock()
		if n, err := syscall.Dup(int(fd)); err == nil {
			syscall.CloseOnExec(n)
			nfd = n
		}
	})
	if nfd < 0 {
		return nil
	}
	return os.NewFile(uintptr(nfd), f.Name())
}
