//go:build unix

package main

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// TestSIGHUPReloads: the command's doc and the README say kill -HUP
// reloads the file on demand: run reads the file on SIGHUP (and logs so),
// and the edited file's limit is served. The signal goes to this process
// only once run is serving, when its handler is in place.
func TestSIGHUPReloads(t *testing.T) {
	sample, path := sampleFile(t)
	var logs syncBuffer
	addr, cancel, ran := startRun(t, path, slog.New(slog.NewJSONHandler(&logs, nil)))
	url := "http://" + addr
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	policyHeader := func() string {
		t.Helper()
		resp, err := client.Get(url + "/")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.Header.Get("RateLimit-Policy")
	}
	before := policyHeader() // serving: run's SIGHUP handler is in place
	if !strings.Contains(before, `"per-minute";q=300;`) {
		t.Fatalf("RateLimit-Policy %q, want the sample's per-minute limit of 300", before)
	}
	save(t, path, bytes.Replace(sample, []byte("limit: 300"), []byte("limit: 3"), 1))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if !hangguard.Poll(wait, 10*time.Millisecond, func() bool {
		return strings.Contains(logs.String(), "SIGHUP: configuration file read")
	}) {
		t.Fatalf("no SIGHUP read logged within %v; log:\n%s", wait, logs.String())
	}
	if got := policyHeader(); !strings.Contains(got, `"per-minute";q=3;`) {
		t.Errorf("after SIGHUP: RateLimit-Policy %q, want per-minute's limit of 3", got)
	}
	cancel()
	if err := await(t, ran, "run did not return after its context was done"); err != nil {
		t.Errorf("run: %v", err)
	}
	goleak.VerifyNone(t)
}
