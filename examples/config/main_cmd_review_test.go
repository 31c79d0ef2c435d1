package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ratekeeper/ratekeeper/examples/internal/apptest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

func TestMain(m *testing.M) {
	addChildFlags()
	apptest.Main(main)
	os.Exit(m.Run())
}

// command returns the example's main as a command with args.
func command(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	return apptest.Command(t, args...)
}

// TestMainBadFile: a new user's first mistakes, given as -config, stop the
// example at once with exit status 1 and an error log naming the file, the
// line and column and the field.
func TestMainBadFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, data, want string }{
		{"nounit.yaml", "policies:\n  - name: per-ip\n    limit: 100\n    window: 60\n", "nounit.yaml:4:13: policies[0].window: 60 has no unit"},
		{"unknown.yaml", "policies:\n  - {name: a, limit: 5, window: 1m, algo: fixed_window}\n", "unknown.yaml:2:37: policies[0].algo: unknown field"},
		{"zero.json", `{"policies":[{"name":"a","limit":0,"window":"1m"}]}`, "zero.json:1:34: policies[0].limit: must be positive"},
		{"missing.yaml", "", "missing.yaml: no such file or directory"},
	} {
		path := filepath.Join(dir, tc.name)
		if tc.data != "" {
			if err := os.WriteFile(path, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cmd := command(t, "-addr", "127.0.0.1:0", "-config", path)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Errorf("%s: %v, want exit status 1; stderr:\n%s", tc.name, err, stderr.String())
			continue
		}
		var rec struct{ Level, Msg, Error string }
		if err := json.Unmarshal([]byte(stderr.String()), &rec); err != nil {
			t.Errorf("%s: stderr is not one JSON log line (%v):\n%s", tc.name, err, stderr.String())
			continue
		}
		if rec.Level != "ERROR" || !strings.Contains(rec.Error, tc.want) {
			t.Errorf("%s: logged %+v, want an ERROR containing %q", tc.name, rec, tc.want)
		}
	}
}

// TestMainBadAddr: a malformed -addr ("8080", a port alone) ends the
// example before serving, with an error naming -addr and the value, and a
// port in use names -addr too, as the other examples do; both were the
// net package's error alone ("listen tcp: address 8080: missing port in
// address").
func TestMainBadAddr(t *testing.T) {
	apptest.CheckBadAddr(t, "-addr", func(bad string) []string { return []string{"-addr", bad, "-config", "ratekeeper.yaml"} })
	apptest.CheckBusyPort(t, "-addr", func(busy string) []string { return []string{"-addr", busy, "-config", "ratekeeper.yaml"} })
}

// TestMainDefaultConfigMissing: run outside the repository's root without
// -config, the example's default file ("examples/config/ratekeeper.yaml",
// relative) is not there: the error said only "no such file or
// directory"; it now says how to name the file.
func TestMainDefaultConfigMissing(t *testing.T) {
	cmd := command(t, "-addr", "127.0.0.1:0")
	cmd.Dir = t.TempDir()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("%v, want exit status 1; stderr:\n%s", err, stderr.String())
	}
	for _, want := range []string{"examples/config/ratekeeper.yaml", "no such file", "-config", "repository"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
		}
	}
}

// TestMainStopsOnSignal: the package documentation: SIGINT or SIGTERM
// stops the example, which logs "shutting down" and exits 0.
func TestMainStopsOnSignal(t *testing.T) {
	sample, err := os.ReadFile("ratekeeper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ratekeeper.yaml")
	save(t, path, sample)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := command(t, "-addr", "127.0.0.1:0", "-config", path)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 16)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		next := func(what string) (string, bool) {
			t.Helper()
			type line struct {
				s  string
				ok bool
			}
			c := make(chan line, 1)
			go func() { s, ok := <-lines; c <- line{s, ok} }()
			l := await(t, c, what)
			return l.s, l.ok
		}
		var listening struct{ Msg, URL string }
		for listening.Msg != "listening" {
			line, ok := next("no \"listening\" logged")
			if !ok {
				cmd.Wait()
				t.Fatalf("%v: the example ended before listening", sig)
			}
			json.Unmarshal([]byte(line), &listening)
		}
		resp, err := http.Get(listening.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%v: GET / answered %d", sig, resp.StatusCode)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		var rest []string
		for {
			line, ok := next(sig.String() + " sent; the example did not end")
			if !ok {
				break
			}
			rest = append(rest, line)
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("%v: the example ended with %v, want exit status 0; log:\n%s", sig, err, strings.Join(rest, "\n"))
		}
		if len(rest) == 0 || !strings.Contains(rest[len(rest)-1], `"msg":"shutting down"`) {
			t.Errorf("%v: the log after the signal is %q, want it to end with \"shutting down\"", sig, rest)
		}
	}
}

// TestMainArgument: the file given without -config ("rk-config
// /tmp/ratekeeper.yaml") is refused, naming it, rather than ignored for
// the default -config, whose limits would then be served while the user
// edits the file named.
func TestMainArgument(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ratekeeper.yaml")
	sample, err := os.ReadFile("ratekeeper.yaml")
	if err != nil {
		t.Fatal(err)
	}
	save(t, path, sample)
	cmd := command(t, "-addr", "127.0.0.1:0", "-config", "ratekeeper.yaml", path)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	err, ended := hangguard.Within(done, wait)
	var ee *exec.ExitError
	if !ended || !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Errorf("a file given without -config: the example ended (%v) with %v, want exit status 2; output:\n%s", ended, err, out.String())
	}
	if !strings.Contains(out.String(), strconv.Quote(path)) {
		t.Errorf("a file given without -config: the output does not name %q:\n%s", path, out.String())
	}
}
