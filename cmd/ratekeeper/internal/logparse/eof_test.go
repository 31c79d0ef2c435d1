package logparse

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"testing"
)

// typed gives its chunks, one a Read, then reports the end (io.EOF) as a
// terminal does at Ctrl-D; a read after that is counted (on a terminal it
// waits for the user to type more) and gives a line, as typing it would,
// then the end again.
type typed struct {
	chunks   [][]byte
	ended    bool
	pastEnd  int
	afterEnd []byte
}

func (r *typed) Read(p []byte) (int, error) {
	if r.ended {
		r.pastEnd++
		if r.pastEnd > 1 {
			return 0, io.EOF
		}
		return copy(p, r.afterEnd), nil
	}
	if len(r.chunks) == 0 {
		r.ended = true
		return 0, io.EOF
	}
	n := copy(p, r.chunks[0])
	r.chunks[0] = r.chunks[0][n:]
	if len(r.chunks[0]) == 0 {
		r.chunks = r.chunks[1:]
	}
	return n, nil
}

// TestReaderStopsAtTheEnd: once the log's reader reports its end
// (io.EOF), a Reader reads it no more. On a terminal the end is the
// user's Ctrl-D, and a read after it waits for more typing: replay of an
// empty log on a terminal ("ratekeeper replay --config FILE -", then
// Ctrl-D at once) read past the end eight times (the peeks for gzip,
// bzip2, zstd and xz, an archive, UTF-16 and a BOM, each retried after
// the end by bufio), and took nine Ctrl-Ds to end.
func TestReaderStopsAtTheEnd(t *testing.T) {
	line := []byte(`203.0.113.7 - - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "curl/8"` + "\n")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(line)
	zw.Close()
	bz, err := os.ReadFile("testdata/two.log.bz2")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		chunks  [][]byte
		entries int
	}{
		{"empty", nil, 0},
		{"one line", [][]byte{line}, 1},
		{"a line, typed in two parts", [][]byte{line[:10], line[10:]}, 1},
		{"a line without its end", [][]byte{line[:len(line)-1]}, 1},
		{"gzip", [][]byte{gz.Bytes()}, 1},
		{"bzip2", [][]byte{bz}, 2},
	} {
		in := &typed{chunks: tc.chunks, afterEnd: line}
		r, err := NewReader(in, "stdin", Options{})
		if err != nil {
			t.Fatalf("%s: NewReader: %v", tc.name, err)
		}
		n := 0
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: Next: %v", tc.name, err)
			}
			n++
		}
		// Asked again after its end, as a merge of logs may.
		if _, err := r.Next(); err != io.EOF {
			t.Errorf("%s: Next after the end = %v, want io.EOF", tc.name, err)
		}
		if n != tc.entries || in.pastEnd != 0 {
			t.Errorf("%s: %d entries, the log read %d times past its end; want %d entries, no read past the end", tc.name, n, in.pastEnd, tc.entries)
		}
	}
}
