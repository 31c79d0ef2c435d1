package main

import (
	"fmt"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/plural"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/quote"
)

// aheadLookahead is the number of lines after a line that jumps ahead of
// its log (see aheadReader) that tell whether the log went on from it.
const aheadLookahead = 8

// An aheadReader reads the entries of one log, leaving out each line
// stamped far ahead of the lines after it in that log: a wrong clock, a
// corrupt line. Replayed, such a line would move the replay's newest time
// ahead, so that the log's later lines, and the other logs', came late;
// at the head of a log, it would also sort the log after the others.
//
// A line that jumps more than tol (the reorder window) ahead of the
// newest line before it in its log, or the log's first line, is weighed
// against the next aheadLookahead lines (fewer at the end of the log): it
// is left out when more than half of them lie more than tol before it
// (the log went on from where it was, not from that line); else the log
// went on from it (a server idle for a while, a slow request logged after
// it among them), and it is replayed. The last line of a log has nothing
// after it to be weighed against, and is replayed. A line left out, the
// next is weighed as the first was: a run of up to half the lookahead of
// such lines is left out (so is a log of so few lines that cat put before
// an older one); a longer run is a log of its own, joined to this one,
// and its lines are replayed. Lines behind the others are the replay's to
// order (replay.Options.Reorder).
type aheadReader struct {
	*logparse.Reader
	tol    time.Duration
	given  bool      // an entry was given
	newest time.Time // of the entries given
	buf    []aheadEntry
	i      int   // the next entry of buf
	err    error // what ended the reads into buf: io.EOF, a read error

	skipped int64
	first   aheadSkip // the first line left out
}

// An aheadEntry is an entry read ahead and its line.
type aheadEntry struct {
	e    logparse.Entry
	line int64
}

// An aheadSkip is a line left out: its number and time, and the line
// after it.
type aheadSkip struct {
	line, next int64
	t, nextT   time.Time
}

// newAheadReader returns an aheadReader of r that leaves out lines more
// than tol ahead of the lines after them.
func newAheadReader(r *logparse.Reader, tol time.Duration) *aheadReader {
	return &aheadReader{Reader: r, tol: tol}
}

// Next returns the next entry not left out, or the error that ended the
// log (io.EOF at its end) after the entries read before it.
func (a *aheadReader) Next() (logparse.Entry, error) {
	for {
		if a.i == len(a.buf) && !a.fill(1) {
			return logparse.Entry{}, a.err
		}
		if t := a.buf[a.i].e.Time; (!a.given || t.After(a.newest.Add(a.tol))) && a.farAhead() {
			a.skip()
			continue
		}
		e := a.buf[a.i].e
		a.buf[a.i] = aheadEntry{}
		a.i++
		if !a.given || e.Time.After(a.newest) {
			a.newest = e.Time
		}
		a.given = true
		return e, nil
	}
}

// fill reads entries into buf until it holds n from i, or the log ends,
// and reports whether it holds one. The entries before i are dropped.
func (a *aheadReader) fill(n int) bool {
	if a.i > 0 {
		k := copy(a.buf, a.buf[a.i:])
		clear(a.buf[k:])
		a.buf, a.i = a.buf[:k], 0
	}
	for len(a.buf) < n && a.err == nil {
		e, err := a.Reader.Next()
		if err != nil {
			a.err = err
			break
		}
		a.buf = append(a.buf, aheadEntry{e: e, line: a.Reader.Lines()})
	}
	return len(a.buf) > 0
}

// farAhead reports whether the entry at i lies more than tol ahead of
// more than half of the aheadLookahead entries after it (none: false).
func (a *aheadReader) farAhead() bool {
	a.fill(1 + aheadLookahead)
	after := a.buf[a.i+1 : min(len(a.buf), a.i+1+aheadLookahead)]
	reach := a.buf[a.i].e.Time.Add(-a.tol)
	behind := 0
	for _, f := range after {
		if f.e.Time.Before(reach) {
			behind++
		}
	}
	return 2*behind > len(after)
}

// skip leaves out the entry at i, which an entry follows.
func (a *aheadReader) skip() {
	h, next := a.buf[a.i], a.buf[a.i+1]
	if a.skipped++; a.skipped == 1 {
		a.first = aheadSkip{line: h.line, t: h.e.Time, next: next.line, nextT: next.e.Time}
	}
	a.buf[a.i] = aheadEntry{}
	a.i++
}

// warning returns the warning for the lines left out of the log name, or
// "" when none was; window names tol ("1m0s, the reorder window").
func (a *aheadReader) warning(name, window string) string {
	if a.skipped == 0 {
		return ""
	}
	it, they := "it", "it"
	if a.skipped > 1 {
		it, they = "them", "they"
	}
	f := a.first
	return fmt.Sprintf("%s: %s stamped far ahead of the lines after %s, by more than %s (the first: line %d, at %s, %s ahead of line %d): left out, not replayed; replayed, %s would have made the later lines of this log and of the others late (a wrong clock, or a corrupt line)",
		quote.IfNeeded(name), plural.Count(a.skipped, "line"), it, window, f.line, f.t.UTC().Format(time.RFC3339Nano), f.t.Sub(f.nextT), f.next, they)
}
