package logparse

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"
)

// TestGzipCutInHeader: a gzip log cut within its 10-byte header (a copy
// taken as the compressor starts writing it) is a truncated log like one
// cut later: no entries, and Damage says the rest is missing. NewReader
// returned an error, which made the replay of every other log fail.
func TestGzipCutInHeader(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte("192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1\n"))
	zw.Close()
	for _, n := range []int{2, 6, 9} {
		r, err := NewReader(bytes.NewReader(buf.Bytes()[:n]), "a.log.gz", Options{})
		if err != nil {
			t.Errorf("cut at %d bytes: NewReader: %v, want a reader of a damaged log", n, err)
			continue
		}
		if _, err := r.Next(); err != io.EOF {
			t.Errorf("cut at %d bytes: Next = %v, want io.EOF", n, err)
		}
		if r.Damage() == nil || !strings.Contains(r.Damage().Error(), "ends early") {
			t.Errorf("cut at %d bytes: Damage() = %v, want the log's early end", n, r.Damage())
		}
	}
}
