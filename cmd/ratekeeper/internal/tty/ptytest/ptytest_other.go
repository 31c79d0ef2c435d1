//go:build !linux

package ptytest

import (
	"os"
	"testing"
)

// Open skips the test: pseudo-terminals are opened on Linux only.
func Open(t testing.TB) (control, term *os.File) {
	t.Helper()
	t.Skip("pseudo-terminals are opened on Linux only")
	return nil, nil
}

// EndInput does nothing: Open skipped the test.
func EndInput(t testing.TB, control *os.File, n int) {}
