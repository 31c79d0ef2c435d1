//go:build linux

package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
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
