//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// TestReplayFromPipe replays a log read from a pipe named by its path, as
// a shell's <(zcat access.log.gz) gives one (/dev/fd/63): the same report
// as the file's. The log was opened to peek at its first entry, closed and
// opened again to be replayed, and what the peek had read from the pipe
// (its first 64 KiB, 662 lines here) was gone.
func TestReplayFromPipe(t *testing.T) {
	data, err := os.ReadFile("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done := make(chan error, 1)
	go func() {
		_, err := w.Write(data)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		done <- err
	}()
	pipe := fmt.Sprintf("/dev/fd/%d", r.Fd())
	want, _, wantCode := runCmd("replay", "--quiet", "--config", "testdata/rules.yaml", "testdata/access.log.1.gz", "testdata/access.log")
	got, errOut, code := runCmd("replay", "--quiet", "--config", "testdata/rules.yaml", "testdata/access.log.1.gz", pipe)
	r.Close() // a writer still blocked on a full pipe fails
	if err := <-done; err != nil {
		t.Errorf("writing the pipe: %v", err)
	}
	got = strings.ReplaceAll(got, pipe, "testdata/access.log")
	if code != wantCode || got != want {
		t.Errorf("from a pipe: exit %d (want %d), stderr %q; report:\n%s\n--- want (from the file):\n%s", code, wantCode, errOut, got, want)
	}
}

// TestReplayBadLogBesideStalledPipe: a log that cannot be read (a
// directory) ends the replay at once, named, though a pipe named before
// it gave a line and then neither ends nor gives more (tail -f on a
// quiet server). Peeking at the pipe's first line waits for the lines
// after it (see aheadReader): the logs read once are peeked at each on a
// goroutine of its own, so that the wait does not keep the other logs'
// errors back.
func TestReplayBadLogBesideStalledPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close() // the pipe ends: a peek still waiting returns
	if _, err := w.WriteString(`192.0.2.1 - - [10/Mar/2024:12:00:00 +0000] "GET / HTTP/1.1" 200 1` + "\n"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	type result struct {
		errOut string
		code   int
	}
	done := make(chan result, 1)
	go func() {
		_, errOut, code := runCmd("replay", "--quiet", "--config", "testdata/rules.yaml", fmt.Sprintf("/dev/fd/%d", r.Fd()), dir)
		done <- result{errOut, code}
	}()
	res, ok := hangguard.Within(done, 10*time.Second)
	if !ok {
		t.Fatalf("replay still going 10 s after a log failed to read, beside a pipe that neither ends nor gives more")
	}
	if want := "ratekeeper replay: " + dir + ": is a directory\n"; res.code != exitUsage || res.errOut != want {
		t.Errorf("exit %d, stderr %q; want 2 and %q", res.code, res.errOut, want)
	}
}

// TestReplayLineFarAheadFromPipe: a line stamped far ahead at the head of
// a log read from a pipe (read once: its first entry is read ahead and
// kept) is left out as it is from a file (TestReplayLineFarAheadInItsLog):
// the decisions are those of the logs without it.
func TestReplayLineFarAheadFromPipe(t *testing.T) {
	dir := t.TempDir()
	a, _ := serverLogs(t, dir)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	done := make(chan error, 1)
	go func() {
		_, err := w.WriteString(farAhead + strings.Join(a, ""))
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		done <- err
	}()
	args := []string{"replay", "--quiet", "--config", "testdata/rules.yaml"}
	want, _, wantCode := runCmd(append(args, filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log"))...)
	pipe := fmt.Sprintf("/dev/fd/%d", r.Fd())
	got, errOut, code := runCmd(append(args, pipe, filepath.Join(dir, "b.log"))...)
	r.Close() // a writer still blocked on a full pipe fails
	if err := <-done; err != nil {
		t.Errorf("writing the pipe: %v", err)
	}
	if g, w := decisions(got), decisions(want); code != wantCode || g != w {
		t.Errorf("exit %d, want %d; decisions\n%s\nwant, as without the line far ahead,\n%s", code, wantCode, g, w)
	}
	if warn := pipe + ": 1 line stamped far ahead"; !strings.Contains(errOut, warn) {
		t.Errorf("no warning %q; stderr:\n%s", warn, errOut)
	}
}
