// Package tty tells whether what a command is about to read is a
// terminal, where a user types the input, which needs saying.
package tty

import (
	"io"
	"syscall"
)

// IsTerminal reports whether r is a terminal: an *os.File (or another
// [syscall.Conn]) whose descriptor the system takes for one, asked as a
// terminal library asks (the termios of the descriptor on Unix, its
// console mode on Windows). A character device that is no terminal
// (/dev/null, NUL), a pipe, a file and a reader without a descriptor are
// none. It leaves r as it was (no read, no change of blocking mode).
func IsTerminal(r io.Reader) bool {
	c, ok := r.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := c.SyscallConn()
	if err != nil {
		return false
	}
	term := false
	if err := rc.Control(func(fd uintptr) { term = isTerminal(fd) }); err != nil {
		return false
	}
	return term
}

// EOFKeys returns the keys that end input typed on a terminal of the
// system goos (a runtime.GOOS): "Ctrl-Z then Enter" in a Windows console,
// where Ctrl-D is read as a character; "Ctrl-D" elsewhere.
func EOFKeys(goos string) string {
	if goos == "windows" {
		return "Ctrl-Z then Enter"
	}
	return "Ctrl-D"
}
