//go:build unix

package main

import (
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// TestSIGHUPDuringStartup: a SIGHUP sent while run is still starting (an
// operator, or a tool that signals the process as soon as it exists)
// must not end the process, Go's default for a signal nobody asked for:
// run catches it from its start, and reads the file once its watcher
// runs, which leaves the rules just loaded in force (the same content is
// not applied again). The file is a FIFO, whose loading waits until this
// test has sent SIGHUP to its own process and writes the sample into it.
func TestSIGHUPDuringStartup(t *testing.T) {
	sample, err := os.ReadFile("ratekeeper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ratekeeper.yaml")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	addr, cancel, ran := startRun(t, path, slog.New(slog.NewJSONHandler(&logs, nil)))
	url := "http://" + addr

	// Opening a FIFO to write returns once a reader opened it: run is
	// loading the file, and waits for its content.
	type opened struct {
		f   *os.File
		err error
	}
	open := make(chan opened, 1)
	go func() { f, err := os.OpenFile(path, os.O_WRONLY, 0); open <- opened{f, err} }()
	o := await(t, open, "run did not open its configuration file")
	if o.err != nil {
		t.Fatal(o.err)
	}
	// The watcher, made after the load, reads a regular file: the sample
	// takes the FIFO's name (run holds the FIFO open).
	save(t, path, sample)
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	_, err = o.f.Write(sample)
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	if !hangguard.Poll(wait, 10*time.Millisecond, func() bool {
		return strings.Contains(logs.String(), "SIGHUP: configuration file read")
	}) {
		t.Fatalf("no SIGHUP read logged within %v; log:\n%s", wait, logs.String())
	}
	if log := logs.String(); strings.Contains(log, "ratekeeper: config") {
		t.Errorf("the SIGHUP of the startup applied or refused the file just loaded; log:\n%s", log)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: wait}
	resp, err := client.Get(url + "/")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if got := resp.Header.Get("RateLimit-Policy"); resp.StatusCode != http.StatusOK || !strings.Contains(got, `"per-minute";q=300;`) {
		t.Errorf("GET / = %d, RateLimit-Policy %q; want 200 and the sample's per-minute limit of 300", resp.StatusCode, got)
	}
	cancel()
	if err := await(t, ran, "run did not return after its context was done"); err != nil {
		t.Errorf("run: %v", err)
	}
	goleak.VerifyNone(t)
}
