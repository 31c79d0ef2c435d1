package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplayStdinName: replay names a log read from standard input
// "stdin", as check names a configuration there (its help says so), in
// the report (text and JSON), the malformed lines' file:line and the
// errors: the same output as from the file, the name aside; both helps
// say so. It named it "-" ("-:94: bad request line", "3001 lines of -").
func TestReplayStdinName(t *testing.T) {
	data, err := os.ReadFile("testdata/access.log")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.log")
	bad := filepath.Join(dir, "bad.log")
	if err := os.WriteFile(good, append(data, "garbage\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("garbage\nmore garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Both helps say so.
	for _, cmd := range []string{"check", "replay"} {
		out, _, _ := runCmd(cmd, "--help")
		if text := strings.Join(strings.Fields(out), " "); !strings.Contains(text, `"-" reads standard input, named "stdin"`) && !strings.Contains(text, `"-" is standard input, named "stdin"`) {
			t.Errorf("%s --help does not say standard input is named \"stdin\":\n%s", cmd, out)
		}
	}
	defer func(f *os.File) { os.Stdin = f }(os.Stdin)
	for _, tc := range []struct {
		log  string
		args []string
	}{
		{good, nil},
		{good, []string{"--json"}},
		{bad, nil},
	} {
		args := append([]string{"replay", "--quiet", "--config", "testdata/rules.yaml"}, tc.args...)
		wantOut, wantErr, wantCode := runCmd(append(args, tc.log)...)
		f, err := os.Open(tc.log)
		if err != nil {
			t.Fatal(err)
		}
		os.Stdin = f
		out, errOut, code := runCmd(append(args, "-")...)
		f.Close()
		wantOut = strings.ReplaceAll(wantOut, tc.log, "stdin")
		wantErr = strings.ReplaceAll(wantErr, tc.log, "stdin")
		if got, want := out+errOut, wantOut+wantErr; code != wantCode || got != want {
			g, w := firstDiff(got, want)
			t.Errorf("%s %v on stdin: exit %d, want %d as from the file; the output differs from the file's, the name aside, first at\n got: %q\nwant: %q", filepath.Base(tc.log), tc.args, code, wantCode, g, w)
		}
	}
}

// firstDiff returns the first line where got and want differ.
func firstDiff(got, want string) (string, string) {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return g[i], w[i]
		}
	}
	if len(g) < len(w) {
		return "(end)", w[len(g)]
	}
	if len(w) < len(g) {
		return g[len(w)], "(end)"
	}
	return "", ""
}
