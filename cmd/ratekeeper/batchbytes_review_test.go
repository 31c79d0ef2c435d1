package main

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// longLines is a log of n Combined lines, each with a path of pathLen
// bytes (a scanner's), generated as it is read.
type longLines struct {
	n, pathLen, i int
	buf           []byte
}

func (l *longLines) Read(p []byte) (int, error) {
	for len(l.buf) == 0 {
		if l.i == l.n {
			return 0, io.EOF
		}
		l.buf = fmt.Appendf(nil, "192.0.2.%d - - [10/Mar/2024:12:00:%02d +0000] \"GET /%s HTTP/1.1\" 404 0\n", l.i%250, l.i%60, strings.Repeat("a", l.pathLen))
		l.i++
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}

// TestReadBatchesBoundedInBytes: the batches a log's parser sends ahead
// (up to six at once for each open log) hold a bounded number of bytes of
// log lines, whatever their length: an entry's strings are substrings of
// its line. They were bounded in entries alone (4096, at least 512 with
// many logs), so a log of long lines (up to 64 KiB each) held up to 1.5
// GiB parsed ahead: a 600 MB log of 30 KB lines replayed at 395 MB RSS.
func TestReadBatchesBoundedInBytes(t *testing.T) {
	const lines, pathLen = 600, 16 << 10
	r, err := logparse.NewReader(&longLines{n: lines, pathLen: pathLen}, "long.log", logparse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for b := range readBatches(r, 512, make(chan struct{}), newFailure()) {
		if b.err != nil {
			t.Fatal(b.err)
		}
		var bytes int
		for _, e := range b.entries {
			bytes += len(e.Path)
		}
		if bytes > batchBytes+pathLen {
			t.Errorf("a batch of %d entries holds %d bytes of their lines' paths; want at most %d (batchBytes, and the line that passed it)", len(b.entries), bytes, batchBytes+pathLen)
		}
		got += len(b.entries)
	}
	if got != lines {
		t.Errorf("the batches hold %d entries, want all %d", got, lines)
	}
}
