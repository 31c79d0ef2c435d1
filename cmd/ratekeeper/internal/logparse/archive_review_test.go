package logparse

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"strings"
	"testing"
)

// TestArchivesRefused: a zip or tar archive of logs (IIS logs are often
// zipped; logs shipped as a .tar.gz) and a log gzip-compressed twice are
// refused at once with an error that says what the file is and how to read
// it, as zstd and xz are. They were read as lines: a zip's compressed bytes
// or the inner gzip's gave "no parseable line in N lines" and samples of
// binary, and a tar's headers, NUL padding and files joined end to end
// were replayed as one log with a malformed line or two.
func TestArchivesRefused(t *testing.T) {
	line := "192.0.2.1 - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.1\" 200 1\n"
	gz := func(b []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	f, _ := zw.Create("u_ex240310.log")
	f.Write([]byte(strings.Repeat(line, 50)))
	zw.Close()
	var tbuf bytes.Buffer
	tw := tar.NewWriter(&tbuf)
	for _, name := range []string{"access.log", "access.log.1"} {
		body := strings.Repeat(line, 50)
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body))})
		tw.Write([]byte(body))
	}
	tw.Close()
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"logs.zip", zbuf.Bytes(), "logs.zip: a zip archive, which replay does not read; extract the logs first (for example: unzip -p logs.zip | ratekeeper replay --config FILE -)"},
		{"logs.tar", tbuf.Bytes(), "logs.tar: a tar archive, which replay does not read; extract the logs first and name each (tar -xf logs.tar)"},
		{"logs.tar.gz", gz(tbuf.Bytes()), "logs.tar.gz: a tar archive, which replay does not read; extract the logs first and name each (tar -xf logs.tar.gz)"},
		{"access.log.gz.gz", gz(gz([]byte(strings.Repeat(line, 50)))), "access.log.gz.gz: gzip-compressed twice; decompress it first (for example: gzip -dc access.log.gz.gz | gzip -dc | ratekeeper replay --config FILE -)"},
	} {
		r, err := NewReader(bytes.NewReader(tc.data), tc.name, Options{})
		if err == nil || !strings.HasSuffix(err.Error(), tc.want) {
			var lines string
			if r != nil {
				e, nerr := r.Next()
				lines = fmt.Sprintf("; first entry %v, err %v", e.Time, nerr)
			}
			t.Errorf("NewReader(%s): err %v%s\nwant an error ending %q", tc.name, err, lines, tc.want)
		}
	}
	// A log of lines, compressed once, still reads.
	r, err := NewReader(bytes.NewReader(gz([]byte(line))), "access.log.gz", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != nil {
		t.Errorf("a gzip log: Next: %v", err)
	}
}
