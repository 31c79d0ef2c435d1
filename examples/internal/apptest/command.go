package apptest

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// The test binary started by Command runs the example's main with the
// arguments in envArgs (one a line) instead of the tests.
const (
	envMain = "RATEKEEPER_EXAMPLE_MAIN"
	envArgs = "RATEKEEPER_EXAMPLE_ARGS"
)

// wait bounds each wait for the example (its start, a response, its end):
// a guard against a hang, counted in the time the test process runs (see
// hangguard), never a wait that makes a test pass.
const wait = 20 * time.Second

// Main, called first in an example's TestMain, runs the example's main in
// a test binary that Command started, and exits; otherwise it returns.
func Main(main func()) {
	if os.Getenv(envMain) != "1" {
		return
	}
	os.Args = append([]string{"example"}, strings.Split(os.Getenv(envArgs), "\n")...)
	main()
	os.Exit(0)
}

// Command returns the example's main (see Main) as a command with args.
func Command(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envMain+"=1", envArgs+"="+strings.Join(args, "\n"))
	return cmd
}

// listening is what an example logs once a server of it listens.
var listening = regexp.MustCompile(`listening on (http://\S+)`)

// CheckBusyPort runs the example with args(busy), busy being an address
// whose port the test holds: the example must end with exit status 1,
// saying the address is in use and naming addrFlag, the flag that chooses
// another, and must never claim to be listening.
func CheckBusyPort(t *testing.T, addrFlag string, args func(busy string) []string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := ln.Addr().String()
	cmd := Command(t, args(busy)...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start(t, cmd)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	err = hangguard.Await(t, done, wait, "with "+busy+" in use: the example did not end")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("with %s in use: the example ended with %v, want exit status 1; output:\n%s", busy, err, out.String())
	}
	if m := listening.FindString(out.String()); m != "" {
		t.Errorf("with %s in use: the example logged %q; output:\n%s", busy, m, out.String())
	}
	for _, want := range []string{busy, "address already in use", addrFlag} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("with %s in use: the output does not say %q:\n%s", busy, want, out.String())
		}
	}
}

// badAddrs are malformed listen addresses a user may give: a port alone,
// a host alone, a port that is not one, one colon too many.
var badAddrs = []string{"8080", "127.0.0.1", "127.0.0.1:http-alt-nope", "127.0.0.1:80:80"}

// CheckBadAddr runs the example with args(bad) for each malformed address
// bad: the example must end with exit status 1, before serving (never
// claiming to be listening), with a message naming addrFlag, the flag,
// and the bad value, as addrFlag "bad" (JSON-escaped in a JSON log).
func CheckBadAddr(t *testing.T, addrFlag string, args func(bad string) []string) {
	t.Helper()
	for _, bad := range badAddrs {
		cmd := Command(t, args(bad)...)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		start(t, cmd)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		err := hangguard.Await(t, done, wait, addrFlag+" "+bad+": the example did not end")
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("%s %q: the example ended with %v, want exit status 1; output:\n%s", addrFlag, bad, err, out.String())
		}
		if strings.Contains(out.String(), "listening") {
			t.Errorf("%s %q: the example claims to listen; output:\n%s", addrFlag, bad, out.String())
		}
		named := addrFlag + " " + strconv.Quote(bad)
		escaped := strings.ReplaceAll(named, `"`, `\"`)
		if !strings.Contains(out.String(), named) && !strings.Contains(out.String(), escaped) {
			t.Errorf("%s %q: the output does not say %s:\n%s", addrFlag, bad, named, out.String())
		}
	}
}

// CheckArgumentRefused runs the example with args, whose last one is an
// argument after the flags: the example must end at once with exit status
// 2 (a usage error) naming it, rather than serve with the defaults of the
// flags the user meant to set.
func CheckArgumentRefused(t *testing.T, args ...string) {
	t.Helper()
	cmd := Command(t, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start(t, cmd)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	err, ended := hangguard.Within(done, wait)
	var ee *exec.ExitError
	if !ended || !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("%q: the example ended (%v) with %v, want exit status 2; output:\n%s", args, ended, err, out.String())
	}
	if arg := args[len(args)-1]; !strings.Contains(out.String(), strconv.Quote(arg)) {
		t.Errorf("%q: the output does not name %q:\n%s", args, arg, out.String())
	}
}

// CheckStopsOnSignal runs the example with args, whose listen addresses
// have port 0, once for SIGTERM and once for SIGINT (Ctrl-C): it must log
// "listening on URL" for each of its servers (n), with the port it got;
// each must answer GET / with 200; the signal must make it log "shutting
// down" and end with exit status 0.
func CheckStopsOnSignal(t *testing.T, n int, args ...string) {
	t.Helper()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := Command(t, args...)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		start(t, cmd)
		lines := make(chan string, 64)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		var log []string
		next := func(what string) (string, bool) {
			t.Helper()
			l := hangguard.Await(t, onceFrom(lines), wait, what)
			if l.ok {
				log = append(log, l.s)
			}
			return l.s, l.ok
		}
		var urls []string
		for len(urls) < n {
			line, ok := next(sig.String() + ` test: no "listening on" logged`)
			if !ok {
				t.Fatalf("%v test: the example ended before listening; log:\n%s", sig, strings.Join(log, "\n"))
			}
			if m := listening.FindStringSubmatch(line); m != nil {
				urls = append(urls, m[1])
			}
		}
		// The timeout guards against a hang, as wait does.
		hc := &http.Client{Timeout: wait}
		for _, u := range urls {
			resp, err := hc.Get(u + "/")
			if err != nil {
				t.Fatalf("%v test: GET %s/: %v; log:\n%s", sig, u, err, strings.Join(log, "\n"))
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%v test: GET %s/ answered %d, want 200", sig, u, resp.StatusCode)
			}
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		said := false
		for {
			line, ok := next(sig.String() + " sent; the example did not end")
			if !ok {
				break
			}
			said = said || strings.Contains(line, "shutting down")
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("%v: the example ended with %v, want exit status 0; log:\n%s", sig, err, strings.Join(log, "\n"))
		}
		if !said {
			t.Errorf("%v: no \"shutting down\" logged after the signal; log:\n%s", sig, strings.Join(log, "\n"))
		}
	}
}

// start starts cmd, killed at the end of the test if it still runs (a
// test that failed while it ran).
func start(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
}

// lineOK is a line read, or ok false at the end of the output.
type lineOK struct {
	s  string
	ok bool
}

// onceFrom returns a channel giving the next line of lines and whether
// there was one (false once lines is closed).
func onceFrom(lines <-chan string) <-chan lineOK {
	c := make(chan lineOK, 1)
	go func() { s, ok := <-lines; c <- lineOK{s, ok} }()
	return c
}
