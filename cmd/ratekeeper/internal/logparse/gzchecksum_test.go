package logparse

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"strings"
	"testing"
)

// TestGzipChecksumDamage: a gzip log whose data fails its checksum (a
// damaged byte: decompressed to its end, the lines before read, some of
// them garbled) is reported as damaged, not as one that "ends early
// after line N" with "the rest of the log missing", which said the lines
// were missing when they had been read, and said nothing of those garbled.
func TestGzipChecksumDamage(t *testing.T) {
	var plain, buf bytes.Buffer
	const lines = 100
	for i := range lines {
		fmt.Fprintf(&plain, "192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] \"GET /%d HTTP/1.1\" 200 1\n", i)
	}
	zw := gzip.NewWriter(&buf)
	zw.Write(plain.Bytes())
	zw.Close()
	data := buf.Bytes()
	data[len(data)-8] ^= 0xff // the CRC-32 of the trailer
	r, err := NewReader(bytes.NewReader(data), "a.log.gz", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := len(readAll(t, r))
	if got != lines {
		t.Errorf("%d entries, want %d (every line decompressed)", got, lines)
	}
	d := r.Damage()
	if d == nil {
		t.Fatal("no damage reported")
	}
	for _, want := range []string{"a.log.gz", "checksum", fmt.Sprint(lines), "garbled"} {
		if !strings.Contains(d.Error(), want) {
			t.Errorf("damage %q; want it to say %q", d, want)
		}
	}
	if strings.Contains(d.Error(), "ends early") {
		t.Errorf("damage %q says the data ends early, where it was read to its end", d)
	}
}
