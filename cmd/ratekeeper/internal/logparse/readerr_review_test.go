package logparse

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestReadErrorMidLineNoEntry: a read that fails partway through a line
// (a log on a disk or network share that fails) returns the error, not
// first an entry parsed from the part of the line read before it: that
// part could parse as a whole request, cut short (here a line whose size
// field was cut from 1234 to 12).
func TestReadErrorMidLineNoEntry(t *testing.T) {
	failure := errors.New("input/output error")
	whole := `192.0.2.1 - - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 1` + "\n"
	cut := `192.0.2.2 - - [10/Mar/2024:12:00:01 +0000] "GET /a HTTP/1.1" 200 12`
	r, err := NewReader(io.MultiReader(strings.NewReader(whole+cut), iotest.ErrReader(failure)), "access.log", Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := r.Next()
	if err != nil || e.Addr != "192.0.2.1" {
		t.Fatalf("first line: %+v, %v; want 192.0.2.1's request", e, err)
	}
	e, err = r.Next()
	if !errors.Is(err, failure) {
		t.Errorf("after the cut line: %+v, %v; want the read error, no entry from the cut line", e, err)
	}
}
