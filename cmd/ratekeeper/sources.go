package main

import (
	"io"
	"os"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// source is one log being read, with its first entry read ahead.
type source struct {
	name  string
	file  io.Closer
	r     *logparse.Reader
	first logparse.Entry
	eof   bool
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func openSource(name string, opts logparse.Options) (*source, int64, error) {
	var rc io.ReadCloser = os.Stdin
	var size int64
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return nil, 0, err
		}
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
		rc = f
	} else {
		rc = io.NopCloser(os.Stdin)
	}
	r, err := logparse.NewReader(rc, name, opts)
	if err != nil {
		rc.Close()
		return nil, 0, err
	}
	s := &source{name: name, file: rc, r: r}
	s.first, err = r.Next()
	if err == io.EOF {
		s.eof = true
	} else if err != nil {
		rc.Close()
		return nil, 0, err
	}
	return s, size, nil
}

// A batch is a run of entries parsed ahead, the bytes read so far, and
// the read error that ended the log, if any.
type batch struct {
	entries []logparse.Entry
	read    int64
	err     error
}

// readBatches parses r on a goroutine of its own, sending batches of
// entries until the end of the log (or a read error, sent last).
func readBatches(r *logparse.Reader) <-chan batch {
	ch := make(chan batch, 4)
	go func() {
		defer close(ch)
		b := batch{entries: make([]logparse.Entry, 0, 4096)}
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.err = err
				break
			}
			b.entries = append(b.entries, e)
			if len(b.entries) == cap(b.entries) {
				b.read = r.BytesRead()
				ch <- b
				b = batch{entries: make([]logparse.Entry, 0, 4096)}
			}
		}
		b.read = r.BytesRead()
		ch <- b
	}()
	return ch
}

// drain empties ch so that its goroutine ends.
func drain(ch <-chan batch) {
	for range ch {
	}
}
