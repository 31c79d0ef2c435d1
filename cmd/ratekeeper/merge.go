package main

import (
	"container/heap"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/quote"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/replay"
)

// A merger replays several logs as one, in time order: the logs of several
// servers interleave, and rotated logs follow one another. Logs sorted by
// their first timestamp are opened when the replay reaches that time, so
// that rotated logs are open one or two at a time, and each is parsed on
// a goroutine of its own.
type merger struct {
	eng      adder
	opts     logparse.Options
	srcs     []*source // by first timestamp, empty logs last
	in       *replay.Input
	stderr   io.Writer
	progress *progress
	// aheadWindow names how far ahead of the lines after it a line is
	// left out (see aheadReader), for the warning.
	aheadWindow string

	failed *failure // the first read error of a log

	next int       // the next source to open
	open cursors   // the open sources, a heap by the time of their entry
	done int64     // bytes read from the sources closed
	all  []*cursor // the open sources, for progress
}

// An adder replays entries: a *replay.Engine.
type adder interface {
	Add(*logparse.Entry) error
}

// A cursor is an open log and its next entry.
type cursor struct {
	index   int // in merger.srcs: the order among entries of the same time
	r       *aheadReader
	closer  io.Closer
	batches <-chan batch
	quit    chan struct{} // closed to end the parsing goroutine early (see stop)
	failed  *failure      // any open log's read error: the replay fails
	batch   batch
	i       int // the entry in batch
	read    int64
	// pending is the entry read ahead from standard input, replayed first.
	pending *logparse.Entry
}

// entry returns the cursor's current entry.
func (c *cursor) entry() *logparse.Entry {
	if c.pending != nil {
		return c.pending
	}
	return &c.batch.entries[c.i]
}

// advance moves to the next entry, reporting whether there is one. A read
// error of another log met while waiting for c's next entries is c's
// error too: the replay fails, and need not wait for c (a log that
// neither ends nor gives more, tail -f into a pipe) to see it. Its own
// comes after the entries read before it.
func (c *cursor) advance() (bool, error) {
	if c.pending != nil {
		c.pending = nil
	} else {
		c.i++
	}
	for c.i >= len(c.batch.entries) {
		if c.batch.err != nil {
			return false, c.batch.err
		}
		failed := c.failed.c
		if stopped(failed) {
			if c.failed.from != c.batches {
				return false, c.failed.err
			}
			failed = nil // c's own: its batches bring it
		}
		var b batch
		var ok bool
		select {
		case b, ok = <-c.batches:
		case <-failed:
			if c.failed.from != c.batches {
				return false, c.failed.err
			}
			b, ok = <-c.batches
		}
		if !ok {
			return false, nil
		}
		c.batch, c.i, c.read = b, 0, b.read
	}
	return true, nil
}

func (c *cursor) time() time.Time { return c.entry().Time }

// cursors is a heap of cursors by the time of their entry, then by source.
type cursors []*cursor

func (h cursors) Len() int { return len(h) }
func (h cursors) Less(i, j int) bool {
	ti, tj := h[i].time(), h[j].time()
	if ti.Equal(tj) {
		return h[i].index < h[j].index
	}
	return ti.Before(tj)
}
func (h cursors) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *cursors) Push(x any)   { *h = append(*h, x.(*cursor)) }
func (h *cursors) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// run replays every source.
func (m *merger) run() error {
	m.failed = newFailure()
	defer func() { // on an error, end the parsing goroutines
		for _, c := range m.open {
			c.stop()
		}
	}()
	for {
		if err := m.openDue(); err != nil {
			return err
		}
		if len(m.open) == 0 {
			return nil
		}
		c := m.open[0]
		// Replay c's entries up to the next entry of another source, or
		// the first of a source yet to open; at an equal time, up to it
		// only if c comes first among the sources (the heap's order).
		var bound time.Time
		boundIndex, bounded := 0, false
		if len(m.open) > 1 {
			o := 1
			if len(m.open) > 2 && m.open.Less(2, 1) {
				o = 2
			}
			bound, boundIndex, bounded = m.open[o].time(), m.open[o].index, true
		}
		if m.next < len(m.srcs) && !m.srcs[m.next].eof && (!bounded || m.srcs[m.next].first.Before(bound)) {
			bound, boundIndex, bounded = m.srcs[m.next].first, m.next, true
		}
		for {
			m.in.Entries++
			if err := m.eng.Add(c.entry()); err != nil {
				return err
			}
			more, err := c.advance()
			if err != nil {
				return err
			}
			if !more {
				heap.Pop(&m.open)
				m.close(c)
				break
			}
			if c.i == 0 {
				m.update()
			}
			if bounded && (c.time().After(bound) || c.time().Equal(bound) && boundIndex < c.index) {
				heap.Fix(&m.open, 0)
				break
			}
		}
	}
}

// openDue opens the sources whose first entry is due: every source when
// none is open, else those starting no later than the earliest open entry.
// An empty log is opened (for its line counts) once all others are done.
func (m *merger) openDue() error {
	for m.next < len(m.srcs) {
		s := m.srcs[m.next]
		if len(m.open) > 0 && (s.eof || s.first.After(m.open[0].time())) {
			return nil
		}
		m.next++
		c, err := m.openCursor(s, m.next-1)
		if err != nil {
			return err
		}
		if c != nil {
			heap.Push(&m.open, c)
		}
	}
	return nil
}

// openCursor opens s at its first entry; nil when it has none (its counts
// are taken at once).
func (m *merger) openCursor(s *source, index int) (*cursor, error) {
	m.in.Files = append(m.in.Files, s.name)
	r, pending, closer, err := s.open(m.opts)
	if err != nil {
		return nil, err
	}
	// Each open log holds up to six batches parsed ahead: smaller ones
	// when many logs may be open at once (servers' logs overlap).
	size := max(512, 4096/len(m.srcs))
	quit := make(chan struct{})
	c := &cursor{index: index, r: r, closer: closer, batches: readBatches(r, size, quit, m.failed), quit: quit, failed: m.failed, pending: pending}
	m.all = append(m.all, c)
	if pending == nil {
		c.i = -1
		more, err := c.advance()
		if err != nil {
			c.stop()
			return nil, err
		}
		if !more {
			m.close(c)
			return nil, nil
		}
	}
	return c, nil
}

// close takes the counts of a finished source and closes it.
func (m *merger) close(c *cursor) {
	c.closer.Close()
	for i, o := range m.all {
		if o == c {
			m.all = append(m.all[:i], m.all[i+1:]...)
			break
		}
	}
	r := c.r
	m.done += r.BytesRead()
	if err := r.Damage(); err != nil {
		m.warn(err.Error())
	}
	if w := r.warning(m.srcs[c.index].name, m.aheadWindow); w != "" {
		m.in.FarAhead += r.skipped
		m.warn(w)
	}
	name, json := quote.IfNeeded(m.srcs[c.index].name), m.opts.JSON
	if n := r.NoPath(); n > 0 {
		// Replayed as requests to /: a route policy sees none of them.
		fields := "field " + quote.IfNeeded(json.Path)
		if json.Path == "" {
			fields = "fields " + strings.Join(logparse.DefaultJSONFields.Path, ", ") + ", or a request line in " + strings.Join(logparse.DefaultJSONFields.Request, ", ")
		}
		m.warn(fmt.Sprintf("%s: %s no request path (%s): replayed as requests to /, so route policies do not see their routes; name the log's field with --json-path", name, jsonLines(n), fields))
	}
	if n := r.NoMethod(); n > 0 {
		// Replayed as GET: a policy on another method sees none of them.
		fields := "field " + quote.IfNeeded(json.Method)
		if json.Method == "" {
			fields = "fields " + strings.Join(logparse.DefaultJSONFields.Method, ", ") + ", or a request line"
		}
		m.warn(fmt.Sprintf("%s: %s no method (%s): replayed as GET, so policies on other methods do not see them; name the log's field with --json-method", name, jsonLines(n), fields))
	}
	if n, host, line := r.HostNames(); n > 0 {
		// The middleware sees the address; the replay has none.
		lines := fmt.Sprintf("%d lines give", n)
		if n == 1 {
			lines = "1 line gives"
		}
		m.warn(fmt.Sprintf("%s: %s the client as a host name, not an address (the first: line %d, %s; Apache's %%h with HostnameLookups On): the ip key part finds no client in them: a policy keyed by ip counts them as refused for want of a key, which the middleware, seeing the address, does not refuse; log the address (%%a, or HostnameLookups Off)", name, lines, line, host))
	}
	m.in.Lines += r.Lines()
	m.in.Malformed += r.MalformedCount()
	for _, s := range r.Samples() {
		if len(m.in.Samples) < 5 {
			m.in.Samples = append(m.in.Samples, s)
		}
	}
}

// jsonLines returns "n JSON lines name" (or "line names" for one).
func jsonLines(n int64) string {
	if n == 1 {
		return "1 JSON line names"
	}
	return fmt.Sprintf("%d JSON lines name", n)
}

// warn reports a warning on standard error and in the report.
func (m *merger) warn(msg string) {
	m.in.Warnings = append(m.in.Warnings, msg)
	fmt.Fprintf(m.stderr, "ratekeeper replay: warning: %s\n", replay.EscapeControls(msg))
}

// update reports progress.
func (m *merger) update() {
	read := m.done
	for _, c := range m.all {
		read += c.read
	}
	m.progress.update(read, m.in.Entries)
}
