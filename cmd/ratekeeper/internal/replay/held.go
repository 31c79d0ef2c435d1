package replay

import (
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
)

// A held line is a line read and not yet replayed: its entry, packed, and
// its place in the log. The reorder window holds every line of its span
// (a minute of a busy server's log is a million lines), so the entry is
// kept compact: its strings in one, cut at ends, and its time as
// nanoseconds and zone, about half the size of a logparse.Entry. Nothing
// of it refers to the log line it was parsed from: an entry's strings are
// substrings of its line (a Common Log Format entry's X-Forwarded-For
// among them), and one kept would keep the whole line.
type held struct {
	ns      int64 // Time.UnixNano()
	seq     uint64
	loc     *time.Location
	text    string    // Addr, User, Method, Path, Query, Proto, Referer, UserAgent, then the headers' values
	ends    [8]uint32 // where each of the eight fields ends in text
	status  int32
	headers []logparse.Header // their values cut from text; their names are the parser's own, no part of a line
}

// hold packs en, the seq-th line of the log.
func hold(en *logparse.Entry, seq uint64) held {
	h := held{ns: en.Time.UnixNano(), seq: seq, loc: en.Time.Location(), status: int32(en.Status)}
	fields := [8]string{en.Addr, en.User, en.Method, en.Path, en.Query, en.Proto, en.Referer, en.UserAgent}
	n := 0
	for _, f := range fields {
		n += len(f)
	}
	for _, hd := range en.Headers {
		n += len(hd.Value)
	}
	var b strings.Builder
	b.Grow(n)
	for i, f := range fields {
		b.WriteString(f)
		h.ends[i] = uint32(b.Len())
	}
	for _, hd := range en.Headers {
		b.WriteString(hd.Value)
	}
	h.text = b.String()
	if len(en.Headers) > 0 {
		h.headers = make([]logparse.Header, len(en.Headers))
		start := int(h.ends[7])
		for i, hd := range en.Headers {
			h.headers[i] = logparse.Header{Name: hd.Name, Value: h.text[start : start+len(hd.Value)]}
			start += len(hd.Value)
		}
	}
	return h
}

// entry unpacks h.
func (h *held) entry() logparse.Entry {
	var f [8]string
	start := uint32(0)
	for i, end := range h.ends {
		f[i] = h.text[start:end]
		start = end
	}
	return logparse.Entry{
		Time: time.Unix(0, h.ns).In(h.loc),
		Addr: f[0], User: f[1], Method: f[2], Path: f[3], Query: f[4], Proto: f[5],
		Status: int(h.status), Referer: f[6], UserAgent: f[7], Headers: h.headers,
	}
}

// before reports whether h is replayed before o: earlier, or as early and
// earlier in the log.
func (h *held) before(o *held) bool {
	if h.ns == o.ns {
		return h.seq < o.seq
	}
	return h.ns < o.ns
}

// queueChunk is the number of lines in one block of a lineQueue.
const queueChunk = 4096

// A lineQueue holds the lines read in time order, first in first out, in
// blocks of queueChunk: it grows a block at a time, without the copy (and
// the doubled peak) of a growing slice, and gives blocks back as it drains.
type lineQueue struct {
	blocks [][]held
	head   int // index of the first line in blocks[0]
	spare  []held
}

func (q *lineQueue) empty() bool { return len(q.blocks) == 0 }

// front returns the first line; the queue must not be empty.
func (q *lineQueue) front() *held { return &q.blocks[0][q.head] }

// back returns the last line; the queue must not be empty.
func (q *lineQueue) back() *held {
	b := q.blocks[len(q.blocks)-1]
	return &b[len(b)-1]
}

func (q *lineQueue) push(h held) {
	if n := len(q.blocks); n == 0 || len(q.blocks[n-1]) == queueChunk {
		b := q.spare
		q.spare = nil
		if b == nil {
			b = make([]held, 0, queueChunk)
		}
		q.blocks = append(q.blocks, b)
	}
	last := len(q.blocks) - 1
	q.blocks[last] = append(q.blocks[last], h)
}

// pop drops the first line; the queue must not be empty.
func (q *lineQueue) pop() {
	b := q.blocks[0]
	b[q.head] = held{} // let the line go
	q.head++
	if q.head < len(b) {
		return
	}
	// The first block is drained (when it is also the last, it is full
	// or the queue is now empty).
	q.head = 0
	q.spare = b[:0]
	copy(q.blocks, q.blocks[1:])
	q.blocks[len(q.blocks)-1] = nil
	q.blocks = q.blocks[:len(q.blocks)-1]
}
