//go:build linux

package main

import (
	"bufio"
	"flag"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// In the example's process that TestSIGHUPWhileParsingFlags starts
// (envSIGHUPFlag set), the flag sighupFlag sends SIGHUP to the thread
// parsing the flags (tgkill: delivered before the call returns), before
// main is done with its flags, let alone listening or in run.
const (
	envSIGHUPFlag = "RATEKEEPER_EXAMPLE_SIGHUP_FLAG"
	sighupFlag    = "test-sighup"
)

// addChildFlags adds sighupFlag in the example's process of
// TestSIGHUPWhileParsingFlags.
func addChildFlags() {
	if os.Getenv(envSIGHUPFlag) != "1" {
		return
	}
	flag.BoolFunc(sighupFlag, "send SIGHUP to the thread parsing the flags (a test's)", func(string) error {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		return syscall.Tgkill(syscall.Getpid(), syscall.Gettid(), syscall.SIGHUP)
	})
}

// TestSIGHUPWhileParsingFlags: a SIGHUP that arrives before run catches
// it, while main parses its flags or listens (an operator, or a tool that
// signals the process as soon as it exists), must not end the process,
// Go's default for a signal nobody asked for: main ignores SIGHUP first
// thing, the file being read after it anyway. Before, the example died
// of it ("signal: hangup") before listening. A SIGHUP once it serves
// still reads the file, run's handler in place after main's ignoring it.
func TestSIGHUPWhileParsingFlags(t *testing.T) {
	_, path := sampleFile(t)
	cmd := command(t, "-addr", "127.0.0.1:0", "-config", path, "-"+sighupFlag)
	cmd.Env = append(cmd.Env, envSIGHUPFlag+"=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var log []string
	// until returns the first line containing want, failing the test if
	// the example ends first.
	until := func(want string) string {
		t.Helper()
		for {
			type line struct {
				s  string
				ok bool
			}
			c := make(chan line, 1)
			go func() { s, ok := <-lines; c <- line{s, ok} }()
			l := await(t, c, "no "+want+" logged")
			if !l.ok {
				err := cmd.Wait()
				t.Fatalf("the example ended (%v) before logging %s; log:\n%s", err, want, strings.Join(log, "\n"))
			}
			log = append(log, l.s)
			if strings.Contains(l.s, want) {
				return l.s
			}
		}
	}
	line := until(`"msg":"listening"`)
	_, url, _ := strings.Cut(line, `"url":"`)
	url, _, _ = strings.Cut(url, `"`)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: wait}
	resp, err := client.Get(url + "/")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET / answered %d, want 200", resp.StatusCode)
	}
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	until("SIGHUP: configuration file read")
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	until("shutting down")
	done := make(chan error, 1)
	go func() {
		for range lines {
		}
		done <- cmd.Wait()
	}()
	if err := await(t, done, "SIGTERM sent; the example did not end"); err != nil {
		t.Errorf("the example ended with %v, want exit status 0; log:\n%s", err, strings.Join(log, "\n"))
	}
}
