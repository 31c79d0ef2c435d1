package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/logparse"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/replay"
)

// TestMergeReadErrorEndsReplay: a log whose reading fails part way (an
// I/O error on a disk or a pipe) fails the replay with that error, after
// the entries read before it; the error was not to be taken for the end
// of the log, a replay of part of it reported as the whole.
func TestMergeReadErrorEndsReplay(t *testing.T) {
	var b strings.Builder
	for i := range 3 {
		fmt.Fprintf(&b, `{"time":"2024-03-10T12:00:%02dZ","remote_addr":"203.0.113.1","method":"GET","path":"/p%d","status":200}`+"\n", i, i)
	}
	eio := errors.New("input/output error")
	src := stdinSource(t, io.MultiReader(strings.NewReader(b.String()), iotest{eio}))
	rec := &recorder{}
	var in replay.Input
	m := &merger{eng: rec, srcs: []*source{src}, in: &in, stderr: io.Discard, progress: newProgress(io.Discard, 0, true)}
	if err := m.run(); !errors.Is(err, eio) {
		t.Errorf("run = %v, want the read error", err)
	}
	if got := strings.Join(rec.paths, " "); got != "p0 p1 p2" {
		t.Errorf("replayed %s before the error, want p0 p1 p2", got)
	}
}

// iotest is a reader that fails with err.
type iotest struct{ err error }

func (r iotest) Read([]byte) (int, error) { return 0, r.err }

// TestMergeOpenErrorEndsReplay: a log that cannot be opened again when
// the replay reaches it (removed since it was peeked at, a rotation
// having deleted it) fails the replay with that error, rather than the
// replay going on without its requests.
func TestMergeOpenErrorEndsReplay(t *testing.T) {
	srcs := logSources(t, []string{"0 a0", "2 a2"}, []string{"1 b1"})
	if err := os.Remove(srcs[1].name); err != nil {
		t.Fatal(err)
	}
	var in replay.Input
	m := &merger{eng: &recorder{}, srcs: srcs, in: &in, stderr: io.Discard, progress: newProgress(io.Discard, 0, true)}
	if err := m.run(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run = %v, want the error opening the removed log", err)
	}
}

// TestMergeThreeLogsNextOfEither: with three logs open, the log replaying
// stops at the next entry of either other log, the second or the third
// of the heap, whichever comes first: here the third log runs on to 4 s
// while the second's next entry is at 4 s too, and the first's at 5 s.
func TestMergeThreeLogsNextOfEither(t *testing.T) {
	logs := [][]string{{"0 a0", "5 a5"}, {"0 b0", "4 b4"}, {"0 c0", "2 c2", "4 c4"}}
	if got, want := strings.Join(mergeOrder(t, logs...), " "), "a0 b0 c0 c2 b4 c4 a5"; got != want {
		t.Errorf("merged order = %s, want %s", got, want)
	}
}

// openWatcher records the most logs a merger held open at once.
type openWatcher struct {
	m        *merger
	paths    []string
	mostOpen int
}

func (w *openWatcher) Add(e *logparse.Entry) error {
	w.paths = append(w.paths, strings.TrimPrefix(e.Path, "/"))
	w.mostOpen = max(w.mostOpen, len(w.m.open))
	return nil
}

// TestMergeOpensRotatedLogsInTurn: rotated logs, one after the other in
// time, and an empty one, are opened in turn as the replay reaches them,
// one at a time, not all at once.
func TestMergeOpensRotatedLogsInTurn(t *testing.T) {
	srcs := logSources(t, []string{"0 a0", "1 a1"}, []string{"2 b2", "3 b3"}, []string{"4 c4"}, nil)
	var in replay.Input
	m := &merger{srcs: srcs, in: &in, stderr: io.Discard, progress: newProgress(io.Discard, 0, true)}
	w := &openWatcher{m: m}
	m.eng = w
	if err := m.run(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(w.paths, " "); got != "a0 a1 b2 b3 c4" || w.mostOpen != 1 {
		t.Errorf("replayed %s with up to %d logs open; want a0 a1 b2 b3 c4, one log open at a time", got, w.mostOpen)
	}
}

// TestMergeProgress: the merger reports progress as each batch of parsed
// entries comes in after a log's first (4096 entries for a single log,
// 2048 each for two), with the requests replayed so far and the share of
// the logs read by then (the batch's: the parser reads ahead), the logs
// done counted once, all of them with the last batch.
func TestMergeProgress(t *testing.T) {
	lines := func(n, sec int) []string {
		l := make([]string, n)
		for i := range l {
			l[i] = fmt.Sprintf("%d p%d", sec, i)
		}
		return l
	}
	for _, tc := range []struct {
		name     string
		logs     [][]string
		requests []int
	}{
		{"one log", [][]string{lines(3*4096+712, 0)}, []int{4096, 8192, 12288}},
		{"two logs in turn", [][]string{lines(5000, 0), lines(5000, 1)}, []int{2048, 4096, 7048, 9096}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srcs := logSources(t, tc.logs...)
			var total int64
			for _, s := range srcs {
				total += s.size
			}
			var out strings.Builder
			prog := newProgress(&out, total, false)
			prog.on = true // whatever the size
			at := prog.start
			prog.now = func() time.Time { at = at.Add(time.Second); return at } // each update is due
			var in replay.Input
			m := &merger{eng: &recorder{}, srcs: srcs, in: &in, stderr: io.Discard, progress: prog}
			if err := m.run(); err != nil {
				t.Fatal(err)
			}
			var requests, pcts []int
			for _, l := range strings.SplitAfter(out.String(), "\n") {
				var n, pct, mib int
				if _, err := fmt.Sscanf(l, "replay: %d requests, %d%% of %d MiB read\n", &n, &pct, &mib); err == nil {
					requests, pcts = append(requests, n), append(pcts, pct)
				}
			}
			growing := len(pcts) > 0 && pcts[0] > 0 && pcts[len(pcts)-1] == 100
			for i := 1; i < len(pcts); i++ {
				growing = growing && pcts[i] > pcts[i-1]
			}
			if !slices.Equal(requests, tc.requests) || !growing {
				t.Errorf("progress:\n%s\nwant lines at %v requests, of a growing share read, 100%% at the last", out.String(), tc.requests)
			}
		})
	}
}

// closeRecorder records whether it was closed.
type closeRecorder struct{ closed int }

func (c *closeRecorder) Close() error { c.closed++; return nil }

// TestMergeClosesLogs: a log read once (standard input, a pipe) is closed
// once replayed, and closed too when its first read fails, which fails the
// replay.
func TestMergeClosesLogs(t *testing.T) {
	const line = `{"time":"2024-03-10T12:00:00Z","remote_addr":"203.0.113.1","method":"GET","path":"/","status":200}` + "\n"
	eio := errors.New("input/output error")
	for _, tc := range []struct {
		name string
		in   io.Reader
		err  error
	}{
		{"replayed", strings.NewReader(line + line), nil},
		{"failing", iotest{eio}, eio},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lr, err := logparse.NewReader(tc.in, "-", logparse.Options{Format: logparse.Format("json")})
			if err != nil {
				t.Fatal(err)
			}
			r := newAheadReader(lr, time.Minute)
			closer := &closeRecorder{}
			src := &source{name: "-", r: r, closer: closer}
			if tc.err == nil {
				first, err := r.Next()
				if err != nil {
					t.Fatal(err)
				}
				src.first, src.pending = first.Time, &first
			}
			var in replay.Input
			m := &merger{eng: &recorder{}, srcs: []*source{src}, in: &in, stderr: io.Discard, progress: newProgress(io.Discard, 0, true)}
			if err := m.run(); !errors.Is(err, tc.err) || err == nil && in.Entries != 2 {
				t.Errorf("run = %v after %d entries, want %v", err, in.Entries, tc.err)
			}
			if closer.closed != 1 {
				t.Errorf("the log was closed %d times, want once", closer.closed)
			}
		})
	}
}

// TestReplayNoPathNoMethodFields: the warnings of a JSON log whose lines
// name no path or no method say "line" for one, and name the fields
// looked in: the defaults, or the one named with --json-path or
// --json-method.
func TestReplayNoPathNoMethodFields(t *testing.T) {
	log := filepath.Join(t.TempDir(), "one.jsonl")
	if err := os.WriteFile(log, []byte(`{"time":"2024-03-10T12:00:00Z","ip":"192.0.2.1"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	defaults := []string{
		"1 JSON line names no request path (fields " + strings.Join(logparse.DefaultJSONFields.Path, ", ") + ", or a request line in " + strings.Join(logparse.DefaultJSONFields.Request, ", ") + ")",
		"1 JSON line names no method (fields " + strings.Join(logparse.DefaultJSONFields.Method, ", ") + ", or a request line)",
	}
	named := []string{"1 JSON line names no request path (field req.path)", "1 JSON line names no method (field req.verb)"}
	for _, tc := range []struct {
		flags []string
		want  []string
	}{
		{nil, defaults},
		{[]string{"--json-path", "req.path", "--json-method", "req.verb"}, named},
	} {
		args := append([]string{"replay", "--quiet", "--config", "testdata/rules.yaml"}, tc.flags...)
		_, errOut, _ := runCmd(append(args, log)...)
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("replay %q: stderr lacks %q:\n%s", tc.flags, w, errOut)
			}
		}
	}
}

// blockingAdder blocks at its n-th entry until release is closed, then
// fails.
type blockingAdder struct {
	n       int
	release chan struct{}
}

func (a *blockingAdder) Add(*logparse.Entry) error {
	if a.n--; a.n == 0 {
		<-a.release
		return errors.New("released")
	}
	return nil
}

// TestMergeReadsAheadSixBatches: a log that never ends, replayed slower
// than it is parsed, is parsed up to six batches of 4096 entries ahead
// (the one being replayed, four sent, one filled waiting) and no further,
// which bounds the memory a replay holds per log.
func TestMergeReadsAheadSixBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := &endlessLog{}
		src := stdinSource(t, log)
		peeked := log.read()
		var in replay.Input
		a := &blockingAdder{n: 2, release: make(chan struct{})} // blocks in the first batch
		m := &merger{eng: a, srcs: []*source{src}, in: &in, stderr: io.Discard, progress: newProgress(io.Discard, 0, true)}
		done := make(chan error, 1)
		go func() { done <- m.run() }()
		synctest.Wait() // the parser stopped, its batches full
		if got, want := log.read()-peeked, 6*4096; got != want {
			t.Errorf("%d lines parsed ahead, want %d (six batches)", got, want)
		}
		close(a.release)
		if err := <-done; err == nil {
			t.Error("run = nil, want the adder's error")
		}
	})
}
