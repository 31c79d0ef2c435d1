package ptytest

import (
	"bytes"
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// Open opens a new pseudo-terminal and returns its two ends: term, a
// terminal as a user's standard input is one (in canonical mode: a line
// is read once ended, and Ctrl-D at the start of a line reads as the end
// of the input), and control, the end whose writes term reads as typed.
// Both are closed when the test ends. Open skips the test when no
// pseudo-terminal can be had (no /dev/ptmx, or no /dev/pts mounted).
func Open(t testing.TB) (control, term *os.File) {
	t.Helper()
	control, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { control.Close() })
	rc, err := control.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	// Unlock the terminal's end (unlockpt) and ask its number (ptsname).
	var n uint32
	var ioctlErr error
	err = rc.Control(func(fd uintptr) {
		if ioctlErr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ioctlErr == nil {
			n, ioctlErr = unix.IoctlGetUint32(int(fd), unix.TIOCGPTN)
		}
	})
	if err == nil {
		err = ioctlErr
	}
	if err != nil {
		t.Skipf("no pseudo-terminal: /dev/ptmx: %v", err)
	}
	name := "/dev/pts/" + strconv.FormatUint(uint64(n), 10)
	term, err = os.OpenFile(name, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { term.Close() })
	return control, term
}

// EndInput types Ctrl-D (the terminal's default end-of-file character)
// into the terminal of control n times, each of which a read of the
// terminal takes as the end of the input: a command that reads it to the
// end reads nothing and does not wait.
func EndInput(t testing.TB, control *os.File, n int) {
	t.Helper()
	if _, err := control.Write(bytes.Repeat([]byte{'\x04'}, n)); err != nil {
		t.Fatal(err)
	}
}
