package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/replay"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// stalledLog is a log that gives its lines, then neither ends nor gives
// more (a pipe from tail -f on a quiet server): its next Read closes
// blocked and blocks until release is closed, then it ends.
type stalledLog struct {
	lines   io.Reader
	once    sync.Once
	blocked chan struct{}
	release chan struct{}
}

func newStalledLog(t *testing.T, lines string) *stalledLog {
	l := &stalledLog{lines: strings.NewReader(lines), blocked: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() { close(l.release) }) // the parser's goroutine ends
	return l
}

func (l *stalledLog) Read(p []byte) (int, error) {
	if n, err := l.lines.Read(p); err != io.EOF {
		return n, err
	}
	l.once.Do(func() { close(l.blocked) }) // past its lines: the parser reads on
	<-l.release
	return 0, io.EOF
}

// failAfter is a reader that fails with err once after is closed.
type failAfter struct {
	after <-chan struct{}
	err   error
}

func (r failAfter) Read([]byte) (int, error) {
	<-r.after
	return 0, r.err
}

// jsonLogLines returns a JSON line at each second of secs, path /p<second>.
func jsonLogLines(secs ...int) string {
	var b strings.Builder
	for _, s := range secs {
		fmt.Fprintf(&b, `{"time":"2024-03-10T12:00:%02dZ","remote_addr":"203.0.113.1","method":"GET","path":"/p%d","status":200}`+"\n", s, s)
	}
	return b.String()
}

// TestMergeReadErrorStopsBesideStalledLog: a log whose reading fails ends
// the replay with its error at once, while another log is a pipe that
// neither ends nor gives more (tail -f into a fifo on a quiet server).
// The replay used to hang: stopping drained the other log's parser, which
// was blocked reading the pipe; or, waiting for the pipe's next entries,
// it never looked at the failed log.
func TestMergeReadErrorStopsBesideStalledLog(t *testing.T) {
	eio := errors.New("input/output error")
	later := make([]int, 4096) // a full batch, however many logs
	for i := range later {
		later[i] = 10
	}
	for _, tc := range []struct {
		name          string
		stall, failed []int // the seconds of the lines of each log, both from 0
	}{
		// The stalled log's parser sends a batch of its entries at 10 s,
		// then blocks reading: the replay goes on to the failed log, meets
		// its error, and stopping must not wait for the stalled log.
		{"error met", append([]int{0}, later...), []int{0, 1}},
		// The replay waits for the stalled log's next entries, and must
		// see the other log, read ahead, fail meanwhile.
		{"waiting on the stalled log", []int{0}, []int{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The read fails once the stalled log's parser is blocked
			// reading it.
			log := newStalledLog(t, jsonLogLines(tc.stall...))
			stalled := stdinSource(t, log)
			failed := stdinSource(t, io.MultiReader(strings.NewReader(jsonLogLines(tc.failed...)), failAfter{log.blocked, eio}))
			var in replay.Input
			m := &merger{eng: &recorder{}, srcs: []*source{stalled, failed}, in: &in, stderr: io.Discard, progress: newProgress(io.Discard, 0, true)}
			done := make(chan error, 1)
			go func() { done <- m.run() }()
			err, ok := hangguard.Within(done, 10*time.Second)
			if !ok {
				t.Fatal("run still going 10 s after a log failed to read, beside a log that never ends")
			}
			if !errors.Is(err, eio) {
				t.Errorf("run = %v, want the read error", err)
			}
		})
	}
}
