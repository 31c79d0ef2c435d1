package logparse

import (
	"bytes"
	"compress/gzip"
	"testing"
)

// TestByteOrderMarkCompressed reads a log saved with a UTF-8 byte order
// mark and then compressed: as for a plain log, the mark is no part of the
// first line (its client address, or the '{' that starts a JSON line).
func TestByteOrderMarkCompressed(t *testing.T) {
	for name, line := range map[string]string{
		"clf":  "\ufeff192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1\n",
		"json": "\ufeff{\"time\": \"2000-10-10T20:55:36Z\", \"ip\": \"192.0.2.1\"}\n",
	} {
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write([]byte(line))
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		r, err := NewReader(&gz, "b.log.gz", Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, r); len(got) != 1 || got[0].Addr != "192.0.2.1" {
			t.Errorf("%s: entries = %+v (malformed %v)", name, got, r.Samples())
		}
	}
}
