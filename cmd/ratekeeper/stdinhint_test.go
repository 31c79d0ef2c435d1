package main

import (
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/tty"
	"github.com/ratekeeper/ratekeeper/cmd/ratekeeper/internal/tty/ptytest"
	"github.com/ratekeeper/ratekeeper/internal/hangguard"
)

// TestStdinTerminalHint: "check -", "replay --config - LOG" and "replay
// --config FILE -" with standard input a terminal (nothing piped) waited
// silently for input that the user did not know to type. Standard input
// that is a terminal now gets one line on standard error, before it is
// read, saying what is read and how to end it; a pipe, a file, or a
// character device that is no terminal (/dev/null, which "check - <
// /dev/null" reads) gets none. The terminal is a pseudo-terminal with the
// end of the input typed into it beforehand, so that no test waits.
func TestStdinTerminalHint(t *testing.T) {
	const (
		configHint = "reading the configuration from standard input (a terminal)"
		logHint    = "reading the log from standard input (a terminal)"
	)
	open := func(name string) *os.File {
		t.Helper()
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	// A new terminal for each case, its input ended by one Ctrl-D, as
	// the hint says.
	term := func() *os.File {
		t.Helper()
		control, term := ptytest.Open(t)
		ptytest.EndInput(t, control, 1)
		return term
	}
	devNull := open(os.DevNull)
	if fi, err := devNull.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s is no character device here (%v)", os.DevNull, err)
	}
	pipe := func(name string) *os.File {
		t.Helper()
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		// Written as the command reads (the log is more than a pipe
		// holds); closing r at the end ends a Write the command left.
		t.Cleanup(func() { r.Close() })
		go func() { w.Write(data); w.Close() }()
		return r
	}
	other := t.TempDir() + "/other" // standard input where a test reads none of it
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	defer func(r io.Reader, f *os.File) { checkStdin, os.Stdin = r, f }(checkStdin, os.Stdin)
	for _, tc := range []struct {
		name   string
		config io.Reader // checkStdin, the configuration's "-"
		log    *os.File  // os.Stdin, the log's "-"
		args   []string
		hint   string // the one line wanted first on stderr, "" for none
	}{
		{"check, a terminal", term(), nil, []string{"check", "-"}, "ratekeeper check: " + configHint},
		{"check, /dev/null", devNull, nil, []string{"check", "-"}, ""},
		{"check, a pipe", pipe("testdata/rules.yaml"), nil, []string{"check", "-"}, ""},
		{"check, a file", open("testdata/rules.yaml"), nil, []string{"check", "-"}, ""},
		{"check, a reader", strings.NewReader("policies: []\n"), nil, []string{"check", "-"}, ""},
		{"check of a file, stdin a terminal", term(), term(), []string{"check", "testdata/rules.yaml"}, ""},
		{"replay config, a terminal", term(), nil, []string{"replay", "--quiet", "--config", "-", "testdata/access.log"}, "ratekeeper replay: " + configHint},
		{"replay config, /dev/null", devNull, nil, []string{"replay", "--quiet", "--config", "-", "testdata/access.log"}, ""},
		{"replay config, a pipe", pipe("testdata/rules.yaml"), nil, []string{"replay", "--quiet", "--config", "-", "testdata/access.log"}, ""},
		{"replay log, a terminal", nil, term(), []string{"replay", "--quiet", "--config", "testdata/rules.yaml", "-"}, "ratekeeper replay: " + logHint},
		{"replay log, /dev/null", nil, devNull, []string{"replay", "--quiet", "--config", "testdata/rules.yaml", "-"}, ""},
		{"replay log, a pipe", nil, pipe("testdata/access.log"), []string{"replay", "--quiet", "--config", "testdata/rules.yaml", "-"}, ""},
		{"replay log, a file", nil, open("testdata/access.log"), []string{"replay", "--quiet", "--config", "testdata/rules.yaml", "-"}, ""},
		{"replay of files, stdin a terminal", term(), term(), []string{"replay", "--quiet", "--config", "testdata/rules.yaml", "testdata/access.log"}, ""},
	} {
		checkStdin, os.Stdin = tc.config, tc.log
		if tc.log == nil {
			os.Stdin = open(other)
		}
		var errOut string
		hangguard.Run(t, 30*time.Second, tc.name+": "+strings.Join(tc.args, " ")+" returns", func() {
			_, errOut, _ = runCmd(tc.args...)
		})
		if n := strings.Count(errOut, "(a terminal)"); n != min(len(tc.hint), 1) {
			t.Errorf("%s: %s: %d hints on stderr, want %d:\n%s", tc.name, strings.Join(tc.args, " "), n, min(len(tc.hint), 1), errOut)
			continue
		}
		if tc.hint == "" {
			continue
		}
		first, _, _ := strings.Cut(errOut, "\n")
		if end := "end with " + tty.EOFKeys(runtime.GOOS); !strings.HasPrefix(first, tc.hint+": ") || !strings.Contains(first, end) || !strings.Contains(first, "pipe") {
			t.Errorf("%s: %s: first line on stderr %q, want the hint %q, saying to %s or pipe a file", tc.name, strings.Join(tc.args, " "), first, tc.hint, end)
		}
	}
}
