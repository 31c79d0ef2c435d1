package main

import (
	"fmt"
	"io"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/plural"
)

// progress reports on standard error, at most once a second, for inputs
// over 32 MiB or of unknown size (standard input: total < 0).
type progress struct {
	w     io.Writer
	total int64
	on    bool
	shown bool // a line was printed
	last  time.Time
	start time.Time
	now   func() time.Time // the clock (time.Now; a test's own)
}

func newProgress(w io.Writer, total int64, quiet bool) *progress {
	now := time.Now()
	return &progress{w: w, total: total, on: !quiet && (total > 32<<20 || total < 0), last: now, start: now, now: time.Now}
}

func (p *progress) update(done, entries int64) {
	if !p.on {
		return
	}
	now := p.now()
	if now.Sub(p.last) < time.Second {
		return
	}
	p.last = now
	p.shown = true
	if p.total < 0 {
		fmt.Fprintf(p.w, "replay: %s, %d MiB read\n", plural.Count(entries, "request"), done>>20)
		return
	}
	fmt.Fprintf(p.w, "replay: %s, %.0f%% of %d MiB read\n", plural.Count(entries, "request"), 100*float64(done)/float64(p.total), p.total>>20)
}

func (p *progress) finish(entries int64) {
	if p.on && (p.shown || p.total > 0) {
		fmt.Fprintf(p.w, "replay: %s read in %s\n", plural.Count(entries, "request"), p.now().Sub(p.start).Round(time.Millisecond))
	}
}
