package main

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// A source is one log to replay: its name, size and first timestamp, found
// by peeking at it. Regular files are opened again to be replayed, so that
// many rotated logs are never open at once; standard input and other
// files that cannot be read twice (a pipe such as a shell's
// <(zcat access.log.gz), a device) keep their reader and the entry read
// ahead.
type source struct {
	name  string
	size  int64
	first time.Time
	eof   bool          // no entry at all
	ahead time.Duration // see aheadReader

	r       *aheadReader    // a log read once only
	pending *logparse.Entry // a log read once only
	closer  io.Closer       // a log read once only: its file
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

// peekSources peeks at each log of logs (see peekSource), returned in
// their order. The logs are opened one after the other; files are peeked
// at as they are opened, each closed again. A log read once (standard
// input, a pipe) is peeked at on a goroutine of its own: the peek waits
// for the lines after its first (see aheadReader), which a pipe may give
// late or never (tail -f on a quiet server), and must not keep another
// log's error back. On an error, the first met, every log opened is
// closed before peekSources returns (which ends the peeks at pipes: a
// read of a file closed returns at once), but standard input.
func peekSources(logs []string, opts logparse.Options, ahead time.Duration) ([]*source, error) {
	type peeked struct {
		i   int
		s   *source
		err error
	}
	srcs := make([]*source, len(logs))
	results, abandon := make(chan peeked), make(chan struct{})
	defer close(abandon)
	stdin := os.Stdin // read here: a test may set it back meanwhile
	var (
		first  error
		opened []*os.File
	)
	waiting := 0
	for i, name := range logs {
		o, err := openLog(name, stdin)
		if err != nil {
			first = err
			break
		}
		if o.f != nil {
			opened = append(opened, o.f)
		}
		if !readOnce(name) {
			if srcs[i], first = o.peek(opts, ahead); first != nil {
				break
			}
			continue
		}
		waiting++
		go func() {
			s, err := o.peek(opts, ahead)
			select {
			case results <- peeked{i, s, err}:
			case <-abandon:
				if s != nil && s.closer != nil {
					s.closer.Close()
				}
			}
		}()
	}
	for ; first == nil && waiting > 0; waiting-- {
		p := <-results
		srcs[p.i], first = p.s, p.err
	}
	if first != nil {
		// Closed twice for some (a file peeked at, a pipe's source):
		// the second Close only returns an error.
		for _, f := range opened {
			f.Close()
		}
		return nil, first
	}
	return srcs, nil
}

// peekSource reads the log named name up to its first entry, leaving out
// lines more than ahead ahead of the lines after them (see aheadReader).
func peekSource(name string, opts logparse.Options, ahead time.Duration) (*source, error) {
	return peekFrom(name, os.Stdin, opts, ahead)
}

// peekFrom is peekSource, standard input being stdin.
func peekFrom(name string, stdin *os.File, opts logparse.Options, ahead time.Duration) (*source, error) {
	o, err := openLog(name, stdin)
	if err != nil {
		return nil, err
	}
	return o.peek(opts, ahead)
}

// An openedLog is a log opened to be peeked at (see openLog).
type openedLog struct {
	s    *source
	in   io.Reader
	f    *os.File // the file opened, nil for standard input
	once bool     // read once: its reader is kept
}

// openLog opens the log named name ("-": stdin) for peek.
func openLog(name string, stdin *os.File) (*openedLog, error) {
	o := &openedLog{s: &source{name: name}, in: stdin, once: name == "-"}
	if o.once {
		o.s.name = stdinName // in the report and the errors, as check says
		return o, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, quotePath(err)
	}
	st, err := f.Stat()
	if err == nil && st.Mode().IsRegular() {
		o.s.size = st.Size()
	} else {
		o.once = true
	}
	o.in, o.f = f, f
	return o, nil
}

// peek reads o up to its first entry, leaving out lines more than ahead
// ahead of the lines after them (see aheadReader). A file read again is
// closed; a log read once keeps its reader, and its file as closer.
func (o *openedLog) peek(opts logparse.Options, ahead time.Duration) (*source, error) {
	s := o.s
	s.ahead = ahead
	closeFile := func() {
		if o.f != nil {
			o.f.Close()
		}
	}
	lr, err := logparse.NewReader(o.in, s.name, opts)
	if err != nil {
		closeFile()
		return nil, err
	}
	r := newAheadReader(lr, ahead)
	e, err := r.Next()
	switch {
	case err == io.EOF:
		s.eof = true
	case err != nil:
		closeFile()
		return nil, err
	default:
		s.first = e.Time
	}
	if !o.once {
		closeFile()
		return s, nil
	}
	s.r, s.closer = r, io.NopCloser(nil)
	if o.f != nil {
		s.closer = o.f
	}
	if !s.eof {
		s.pending = &e
	}
	return s, nil
}

// open returns a reader of s from its start (for standard input, with the
// entry read ahead, to be replayed first) and what to close after.
func (s *source) open(opts logparse.Options) (*aheadReader, *logparse.Entry, io.Closer, error) {
	if s.r != nil {
		return s.r, s.pending, s.closer, nil
	}
	f, err := os.Open(s.name)
	if err != nil {
		return nil, nil, nil, quotePath(err)
	}
	r, err := logparse.NewReader(f, s.name, opts)
	if err != nil {
		f.Close()
		return nil, nil, nil, err
	}
	return newAheadReader(r, s.ahead), nil, f, nil
}

// An entryReader reads the entries of a log: a *logparse.Reader, or an
// *aheadReader.
type entryReader interface {
	Next() (logparse.Entry, error)
	LineBytes() int64
	BytesRead() int64
}

// A batch is a run of entries parsed ahead, the bytes read so far, and
// the read error that ended the log, if any.
type batch struct {
	entries []logparse.Entry
	read    int64
	err     error
}

// batchBytes bounds the bytes of log lines a batch's entries come from
// (their strings are substrings of their lines, which they keep): a batch
// is sent once it holds size entries or its lines passed batchBytes, so
// that a log of long lines (up to 64 KiB each) holds no more parsed ahead
// than one of short lines. A batch of 4096 Combined lines of 200 bytes
// holds under 1 MiB.
const batchBytes = 1 << 20

// readBatches parses r on a goroutine of its own, sending batches of size
// entries, or fewer whose lines passed batchBytes (see there), until the
// end of the log (or a read error, sent last and told
// to fail at once, so that a replay waiting on another log stops), or
// until stop is closed: a replay that failed does not read the rest of its
// logs (standard input may never end).
func readBatches(r entryReader, size int, stop <-chan struct{}, fail *failure) <-chan batch {
	ch := make(chan batch, 4)
	go func() {
		defer close(ch)
		b := batch{entries: make([]logparse.Entry, 0, size)}
		from := r.LineBytes() // the lines' bytes before the batch's
		for {
			if stopped(stop) {
				// Checked before each entry: the select below picks at
				// random when its cursor, stopping, drains ch, so it
				// may send rather than stop.
				return
			}
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				if stopped(stop) {
					return // a read of a log closed by stop
				}
				b.err = err
				fail.set(err, ch)
				break
			}
			b.entries = append(b.entries, e)
			if len(b.entries) == cap(b.entries) || r.LineBytes()-from >= batchBytes {
				from = r.LineBytes()
				b.read = r.BytesRead()
				select {
				case ch <- b:
				case <-stop:
					return
				}
				b = batch{entries: make([]logparse.Entry, 0, size)}
			}
		}
		b.read = r.BytesRead()
		select {
		case ch <- b:
		case <-stop:
		}
	}()
	return ch
}

// A failure is the first read error of the logs of a replay: c is closed
// when there is one, err, met by the parser sending from.
type failure struct {
	once sync.Once
	c    chan struct{}
	err  error
	from <-chan batch
}

func newFailure() *failure { return &failure{c: make(chan struct{})} }

// set records err, met by the parser sending from, if it is the first.
func (f *failure) set(err error, from <-chan batch) {
	f.once.Do(func() {
		f.err, f.from = err, from
		close(f.c)
	})
}

// stopped reports whether stop is closed.
func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// stop tells the parsing goroutine of c, which is not read to its end, to
// end, and closes its log. It does not wait for the goroutine: blocked
// reading a log that neither ends nor gives more (a pipe from tail -f, a
// terminal), it ends only once that read returns, which closing the log
// brings about for a pipe or a file but not for every input (standard
// input); it then reads no more.
func (c *cursor) stop() {
	close(c.quit)
	c.closer.Close()
}
