package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/replay"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// recorder records the entries a merger replays, in order.
type recorder struct{ paths []string }

func (r *recorder) Add(e *logparse.Entry) error {
	r.paths = append(r.paths, strings.TrimPrefix(e.Path, "/"))
	return nil
}

// mergeOrder merges the logs (each a list of "second path" lines, in
// the order given: the sources' order among equal times) and returns the
// paths in the order replayed.
func mergeOrder(t *testing.T, logs ...[]string) []string {
	t.Helper()
	rec := &recorder{}
	var in replay.Input
	m := &merger{eng: rec, srcs: logSources(t, logs...), in: &in, stderr: io.Discard, progress: newProgress(io.Discard, 0, true)}
	if err := m.run(); err != nil {
		t.Fatal(err)
	}
	return rec.paths
}

// logSources writes the logs (each a list of "second path" lines, the
// second under 60) as JSON lines files and peeks at them, in the order
// given.
func logSources(t *testing.T, logs ...[]string) []*source {
	t.Helper()
	dir := t.TempDir()
	var srcs []*source
	for i, lines := range logs {
		var b strings.Builder
		for _, l := range lines {
			var sec int
			var path string
			if _, err := fmt.Sscan(l, &sec, &path); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, `{"time":"2024-03-10T12:00:%02dZ","remote_addr":"203.0.113.1","method":"GET","path":%q,"status":200}`+"\n", sec, "/"+path)
		}
		name := filepath.Join(dir, fmt.Sprintf("web%d.jsonl", i))
		if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := peekSource(name, logparse.Options{}, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, s)
	}
	return srcs
}

// TestMergeEqualTimesInSourceOrder: entries of the same time are replayed
// in the order of their logs (the cursors' heap order), whichever log
// happened to be replaying when the tie came.
func TestMergeEqualTimesInSourceOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		logs [][]string
		want string
	}{
		{"first log current", [][]string{{"0 a0", "2 a2"}, {"1 b1", "2 b2"}}, "a0 b1 a2 b2"},
		{"second log current", [][]string{{"1 a1", "2 a2"}, {"1 b1", "2 b2", "2 b2x"}}, "a1 b1 a2 b2 b2x"},
		{"third log", [][]string{{"0 a0", "3 a3"}, {"0 b0", "3 b3"}, {"1 c1", "3 c3"}}, "a0 b0 c1 a3 b3 c3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(mergeOrder(t, tc.logs...), " "); got != tc.want {
				t.Errorf("merged order = %s, want %s", got, tc.want)
			}
		})
	}
}

// endlessLog is a log that never ends (a pipe from a live server): one
// JSON line per Read, a second apart. It counts the lines read.
type endlessLog struct {
	mu    sync.Mutex
	lines int
}

func (l *endlessLog) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	line := fmt.Sprintf(`{"time":"%s","remote_addr":"203.0.113.1","method":"GET","path":"/","status":200}`+"\n",
		time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC).Add(time.Duration(l.lines)*time.Second).Format(time.RFC3339))
	if len(p) < len(line) {
		return 0, io.ErrShortBuffer
	}
	l.lines++
	return copy(p, line), nil
}

func (l *endlessLog) read() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lines
}

// failingAdder fails at its n-th entry.
type failingAdder struct{ n int }

func (a *failingAdder) Add(*logparse.Entry) error {
	if a.n--; a.n == 0 {
		return errors.New("store failed")
	}
	return nil
}

// TestMergeErrorStopsEndlessLog: an error in the middle of a replay ends
// it even when a log never ends (standard input from a live server): the
// parsing goroutine stops instead of being drained to the end of its log.
func TestMergeErrorStopsEndlessLog(t *testing.T) {
	log := &endlessLog{}
	src := stdinSource(t, log)
	var in replay.Input
	m := &merger{eng: &failingAdder{n: 100}, srcs: []*source{src}, in: &in, stderr: io.Discard, progress: newProgress(io.Discard, 0, true)}
	done := make(chan error, 1)
	go func() { done <- m.run() }()
	err, ok := hangguard.Within(done, 30*time.Second)
	if !ok {
		t.Fatalf("run still going 30 s after the adder failed at its 100th entry (%d lines read)", log.read())
	}
	if err == nil || err.Error() != "store failed" {
		t.Fatalf("run = %v, want the adder's error", err)
	}
	// The parser was told to stop (run does not wait for it: blocked
	// reading a log that gives nothing more, it may never end); it ends,
	// having read no more than the entries replayed and the batches it
	// holds ahead (4 sent, 1 received, 1 being filled, of 4096 entries
	// each for a single log), and one line it was reading as it was told.
	for _, c := range m.all {
		if _, ok := hangguard.Within(parserEnd(c), 30*time.Second); !ok {
			t.Fatalf("the parser still runs 30 s after run returned (%d lines read)", log.read())
		}
	}
	if n, bound := log.read(), 100+6*4096+1+1; n > bound {
		t.Fatalf("%d lines read by the time the parser ended; want at most %d (it read on past the failure)", n, bound)
	}
}

// parserEnd returns a channel closed when the parsing goroutine of c has
// ended, the batches it had sent received.
func parserEnd(c *cursor) <-chan struct{} {
	end := make(chan struct{})
	go func() {
		for range c.batches {
		}
		close(end)
	}()
	return end
}

// TestReadBatchesStopsFirst: a parsing goroutine told to stop reads no
// further, even when its channel has room for what it parsed. With both
// ready, a select picks at random, so it once read on for a batch or more
// while its cursor drained the channel (TestMergeErrorStopsEndlessLog saw
// 7 batches read where 6 can be in flight). Each round has a fresh
// goroutine that finds the stop already closed and the channel empty.
func TestReadBatchesStopsFirst(t *testing.T) {
	const size, rounds = 64, 20
	for i := range rounds {
		log := &endlessLog{}
		r, err := logparse.NewReader(log, "-", logparse.Options{})
		if err != nil {
			t.Fatal(err)
		}
		before := log.read() // the lines NewReader looked at
		stop := make(chan struct{})
		close(stop)
		sent := 0
		for range readBatches(r, size, stop, newFailure()) {
			sent++
		}
		if n := log.read() - before; n >= size || sent > 0 {
			t.Fatalf("round %d: a stopped parser read %d more lines and sent %d batches; want under one batch (%d) and none sent", i, n, sent, size)
		}
		// It parsed nothing either: the log's first entry is still to come.
		if e, err := r.Next(); err != nil || !e.Time.Equal(time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)) {
			t.Fatalf("round %d: after the stopped parser, the log's next entry is at %v (%v); want its first, none parsed", i, e.Time, err)
		}
	}
}

// stdinSource returns the source of a log read once, named "-", from
// log, its first entry read. It is read as given, without the look at the
// lines after it that peekSource takes (see aheadReader): a log that
// stalls after it (stalledLog) gives no more to look at.
func stdinSource(t *testing.T, log io.Reader) *source {
	t.Helper()
	lr, err := logparse.NewReader(log, "-", logparse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := lr.Next()
	if err != nil {
		t.Fatal(err)
	}
	r := newAheadReader(lr, time.Minute)
	r.given, r.newest = true, first.Time
	return &source{name: "-", first: first.Time, ahead: time.Minute, r: r, pending: &first, closer: io.NopCloser(nil)}
}
