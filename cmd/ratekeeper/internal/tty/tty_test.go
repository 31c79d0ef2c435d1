package tty_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/tty"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/tty/ptytest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// TestIsTerminal: a pseudo-terminal is a terminal; /dev/null (a character
// device as a terminal is, which a Stat alone took for one), a pipe, a
// file and a reader without a descriptor are not.
func TestIsTerminal(t *testing.T) {
	open := func(name string) *os.File {
		t.Helper()
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	closed := open(file)
	closed.Close()
	for _, tc := range []struct {
		name string
		r    interface{ Read([]byte) (int, error) }
		want bool
	}{
		{os.DevNull, open(os.DevNull), false},
		{"a pipe", r, false},
		{"a file", open(file), false},
		{"a closed file", closed, false},
		{"a strings.Reader", strings.NewReader("x"), false},
	} {
		if got := tty.IsTerminal(tc.r); got != tc.want {
			t.Errorf("IsTerminal(%s) = %t, want %t", tc.name, got, tc.want)
		}
	}
	control, term := ptytest.Open(t)
	if !tty.IsTerminal(term) {
		t.Errorf("IsTerminal(a pseudo-terminal) = false, want true")
	}
	// Asking reads nothing: what was typed is still there to read.
	if _, err := control.Write([]byte("policies: []\n")); err != nil {
		t.Fatal(err)
	}
	tty.IsTerminal(term)
	buf := make([]byte, 64)
	var n int
	hangguard.Run(t, 30*time.Second, "a read of the line typed", func() { n, err = term.Read(buf) })
	if err != nil || string(buf[:n]) != "policies: []\n" {
		t.Errorf("after IsTerminal, the terminal reads %q, %v; want the line typed", buf[:n], err)
	}
}

// TestEOFKeys: typed input ends with Ctrl-D on a Unix terminal, with
// Ctrl-Z then Enter in a Windows console, where Ctrl-D is a character
// like any other.
func TestEOFKeys(t *testing.T) {
	for goos, want := range map[string]string{
		"linux": "Ctrl-D", "darwin": "Ctrl-D", "freebsd": "Ctrl-D", "windows": "Ctrl-Z then Enter",
	} {
		if got := tty.EOFKeys(goos); got != want {
			t.Errorf("EOFKeys(%q) = %q, want %q", goos, got, want)
		}
	}
}
