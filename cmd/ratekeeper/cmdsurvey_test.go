package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// checkAdvice runs "ratekeeper check" on the configuration doc, which must
// be valid, and returns its advice lines.
func checkAdvice(t *testing.T, doc string) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd("check", path)
	if code != exitOK {
		t.Fatalf("check: exit %d, want 0; stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	_, advice, _ := strings.Cut(out, "\nadvice (the configuration is valid; these are choices often regretted):\n")
	var lines []string
	for l := range strings.Lines(advice) {
		lines = append(lines, strings.TrimSpace(l))
	}
	return lines
}

// TestCheckAdviceSlidingLogSize: check advises on a sliding_log's memory
// past maxLogLimit (10000 per window), not at it, giving a full key's log
// as the in-memory store keeps it, in KB of 1024 bytes: 16 bytes an
// accepted instant (its time and its count, algorithms.slidingLog), up to
// limit of them. It gave 8 bytes a timestamp, half the store's figure.
func TestCheckAdviceSlidingLogSize(t *testing.T) {
	for _, tc := range []struct {
		limit int
		want  string
	}{
		{10000, ""},
		{10001, "up to 10001 per key (about 156 KB)"},
		{12800, "up to 12800 per key (about 200 KB)"},
	} {
		doc := fmt.Sprintf("policies:\n  - {name: log, limit: %d, window: 1h, algorithm: sliding_log, key: ip}\n", tc.limit)
		advice := checkAdvice(t, doc)
		want := []string(nil)
		if tc.want != "" {
			want = []string{"log (line 2): sliding_log keeps one timestamp per admitted request: " + tc.want + "; sliding_window or sliding_buckets bound it"}
		}
		if fmt.Sprint(advice) != fmt.Sprint(want) {
			t.Errorf("sliding_log, limit %d: advice %q, want %q", tc.limit, advice, want)
		}
	}
}

// TestCheckAdviceKeyNeedsAuth: a key on a header or a cookie, like one on
// the user, is missing from some requests, which are then rejected on
// every route: check advises a fallback or on_missing_key: skip, for a
// name of one character too; a key on the IP or the route draws no advice.
func TestCheckAdviceKeyNeedsAuth(t *testing.T) {
	for _, tc := range []struct{ key, missing string }{
		{"header:X-Api-Key", "header:X-Api-Key"},
		{"cookie:session", "cookie:session"},
		{"header:X", "header:X"},
		{"cookie:s", "cookie:s"},
		{"[ip, header:X-Tenant]", "ip+header:X-Tenant"},
		{"ip", ""},
		{"[ip, route]", ""},
	} {
		doc := fmt.Sprintf("policies:\n  - name: api\n    limit: 5\n    window: 1m\n    key: %s\n", tc.key)
		var advice []string
		for _, a := range checkAdvice(t, doc) {
			if !strings.Contains(a, "the client chooses") { // TestLintKeyTheClientChooses
				advice = append(advice, a)
			}
		}
		want := []string(nil)
		if tc.missing != "" {
			want = []string{"api (line 2): requests without " + tc.missing + " are rejected with 400 on every route; add fallback: ip, or on_missing_key: skip"}
		}
		if fmt.Sprint(advice) != fmt.Sprint(want) {
			t.Errorf("key %s: advice %q, want %q", tc.key, advice, want)
		}
	}
}

// TestCheckAdviceRouteSpelledTwiceInOnePolicy: one policy that routes one
// route spelled two ways draws the advice too, as the replay warns of it
// (a router registers one of the two).
func TestCheckAdviceRouteSpelledTwiceInOnePolicy(t *testing.T) {
	doc := "policies:\n  - {name: items, limit: 5, window: 1m, key: ip, routes: [\"GET /items/{id}\", \"GET /items/{name}\"]}\n"
	advice := checkAdvice(t, doc)
	want := `items (line 2): route "GET /items/{name}" is items's "GET /items/{id}" spelled another way`
	if len(advice) != 1 || !strings.HasPrefix(advice[0], want) {
		t.Errorf("advice %q, want one, %q...", advice, want)
	}
}

// progressClock gives p a clock of the test's own, at its start, and
// returns the function moving it.
func progressClock(p *progress) func(time.Duration) {
	at := p.start
	p.now = func() time.Time { return at }
	return func(d time.Duration) { at = at.Add(d) }
}

// TestProgressShownOver32MiB: progress shows for an input over 32 MiB or of
// unknown size, not for one of 32 MiB or less (an empty one either).
func TestProgressShownOver32MiB(t *testing.T) {
	for _, tc := range []struct {
		total int64
		shown bool
	}{
		{0, false}, {1, false}, {32 << 20, false}, {32<<20 + 1, true}, {64 << 20, true}, {-1, true},
	} {
		var buf bytes.Buffer
		p := newProgress(&buf, tc.total, false)
		move := progressClock(p)
		move(2 * time.Second)
		p.update(1<<20, 10)
		p.finish(10)
		if got := buf.Len() > 0; got != tc.shown {
			t.Errorf("input of %d bytes: progress %q, want shown %v", tc.total, buf.String(), tc.shown)
		}
	}
}

// TestProgressOncePerSecond: an update within a second of the last line
// shown prints nothing.
func TestProgressOncePerSecond(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 100<<20, false)
	move := progressClock(p)
	for _, step := range []struct {
		after time.Duration
		done  int64
	}{{time.Second, 10 << 20}, {500 * time.Millisecond, 20 << 20}, {499 * time.Millisecond, 30 << 20}, {time.Millisecond, 40 << 20}} {
		move(step.after)
		p.update(step.done, step.done>>20)
	}
	want := "replay: 10 requests, 10% of 100 MiB read\nreplay: 40 requests, 40% of 100 MiB read\n"
	if buf.String() != want {
		t.Errorf("progress:\n%s\nwant:\n%s", buf.String(), want)
	}
}

// TestProgressFinish: the closing line, with the time taken, follows a
// replay of a large file, shown progress or not, and one of standard input
// that showed progress; a replay of standard input that showed none (it
// was short) ends silent.
func TestProgressFinish(t *testing.T) {
	for _, tc := range []struct {
		name   string
		total  int64
		update bool
		want   string
	}{
		{"large file", 100 << 20, false, "replay: 7 requests read in 1.5s\n"},
		{"large file shown", 100 << 20, true, "replay: 7 requests, 1% of 100 MiB read\nreplay: 7 requests read in 1.5s\n"},
		{"stdin", -1, false, ""},
		{"stdin shown", -1, true, "replay: 7 requests, 1 MiB read\nreplay: 7 requests read in 1.5s\n"},
	} {
		var buf bytes.Buffer
		p := newProgress(&buf, tc.total, false)
		move := progressClock(p)
		move(1500 * time.Millisecond)
		if tc.update {
			p.update(1<<20, 7)
		}
		p.finish(7)
		if buf.String() != tc.want {
			t.Errorf("%s: progress %q, want %q", tc.name, buf.String(), tc.want)
		}
	}
}

// TestDemoNoTempDir: without --svg, a temporary directory where the chart
// cannot be created is a failure at once: exit 2, an error naming the
// directory, nothing on standard output.
func TestDemoNoTempDir(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	t.Setenv("TMPDIR", missing)
	out, errOut, code := runCmd("demo")
	if code != exitUsage || out != "" || !strings.HasPrefix(errOut, "ratekeeper demo: ") || !strings.Contains(errOut, missing) {
		t.Errorf("demo, TMPDIR %s missing: exit %d, stdout %d bytes, stderr %q; want exit 2, no output, an error naming the directory", missing, code, len(out), errOut)
	}
}

// TestDemoClosesChart: the demo leaves no file descriptor open on the
// chart it creates in the temporary directory. The garbage collector is
// off meanwhile: an *os.File's finalizer would close a file left open.
func TestDemoClosesChart(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the open file descriptors in /proc/self/fd, Linux only")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	if _, errOut, code := runCmd("demo"); code != exitOK {
		t.Fatalf("demo: exit %d; stderr: %s", code, errOut)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, tmp+string(filepath.Separator)) {
			t.Errorf("file descriptor %s is still open on %s", fd.Name(), target)
		}
	}
}

// TestExitStatusNumbers: the exit statuses are the documented numbers: 0
// success, 1 findings, 2 usage or input error.
func TestExitStatusNumbers(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"check", "testdata/rules.yaml"}, 0},
		{[]string{"check", "testdata/bad.yaml"}, 1},
		{[]string{"check"}, 2},
	} {
		if _, _, code := runCmd(tc.args...); code != tc.want {
			t.Errorf("ratekeeper %q: exit %d, want %d", tc.args, code, tc.want)
		}
	}
}

// mainArgsEnv holds the arguments TestMainProcess runs main with, in a
// test binary run by TestMainExitStatus.
const mainArgsEnv = "RATEKEEPER_TEST_MAIN_ARGS"

// TestMainProcess runs main, as the ratekeeper command, when the test
// binary is started by TestMainExitStatus; else it does nothing.
func TestMainProcess(t *testing.T) {
	args, ok := os.LookupEnv(mainArgsEnv)
	if !ok {
		return
	}
	os.Args = append([]string{"ratekeeper"}, strings.Fields(args)...)
	main()
}

// TestMainExitStatus: the command takes its arguments after the program's
// name, and exits with run's status.
func TestMainExitStatus(t *testing.T) {
	want, _, _ := runCmd("check", "testdata/advice.yaml")
	for _, tc := range []struct {
		args string
		code int
	}{
		{"check testdata/advice.yaml", 0},
		{"check testdata/bad.yaml", 1},
		{"frobnicate", 2},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMainProcess$")
		cmd.Env = append(os.Environ(), mainArgsEnv+"="+tc.args)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != tc.code {
			t.Errorf("ratekeeper %s: exit %d, want %d; stdout:\n%s\nstderr:\n%s", tc.args, code, tc.code, out.String(), errOut.String())
		}
		if tc.code == 0 && out.String() != want {
			t.Errorf("ratekeeper %s: stdout\n%s\nwant\n%s", tc.args, out.String(), want)
		}
	}
}

// failOnce fails its first write and takes every later one.
type failOnce struct {
	failed bool
	buf    bytes.Buffer
}

func (w *failOnce) Write(p []byte) (int, error) {
	if !w.failed {
		w.failed = true
		return 0, errors.New("interrupted")
	}
	return w.buf.Write(p)
}

// TestOutputNothingAfterError: after a write to standard output fails,
// nothing more is written (a report with its first lines missing would
// mislead), each later write returning the first error, and the exit
// status is 2.
func TestOutputNothingAfterError(t *testing.T) {
	var w failOnce
	var e bytes.Buffer
	if code := run([]string{"check", "testdata/advice.yaml"}, &w, &e); code != exitUsage || !strings.Contains(e.String(), "interrupted") {
		t.Errorf("check to a stdout failing once: exit %d, stderr %q; want exit 2 and the write error", code, e.String())
	}
	if w.buf.Len() != 0 {
		t.Errorf("written after the error:\n%s", w.buf.String())
	}
	o := &outWriter{w: &failOnce{}}
	o.Write([]byte("a"))
	if n, err := o.Write([]byte("b")); n != 0 || err == nil || err.Error() != "interrupted" {
		t.Errorf("write after an error = %d, %v; want 0, interrupted", n, err)
	}
}

// TestHelpAfterDoubleDash: an argument "-h", "-help" or "--help" after
// "--" is a file name, not a request for help.
func TestHelpAfterDoubleDash(t *testing.T) {
	for _, h := range []string{"-h", "-help", "--help"} {
		out, errOut, code := runCmd("check", "--", h)
		if code != exitUsage || out != "" || !strings.Contains(errOut, h) {
			t.Errorf("check -- %s: exit %d, stdout %q, stderr %q; want exit 2 and an error naming the file %s", h, code, out, errOut, h)
		}
	}
}
