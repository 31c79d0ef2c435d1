package main

import (
	"io"
	"os"
	"strings"
	"testing"
)

// TestCheckStdin: "check -" reads the configuration from standard input,
// as replay's "-" does, with the same report as from a file (the file
// named "stdin"). It failed with "open -: no such file or directory",
// exit 2.
func TestCheckStdin(t *testing.T) {
	defer func(r io.Reader) { checkStdin = r }(checkStdin)
	for _, path := range []string{"testdata/advice.yaml", "testdata/bad.yaml", "testdata/hops.yaml"} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		wantOut, wantErr, wantCode := runCmd("check", path)
		checkStdin = strings.NewReader(string(data))
		out, errOut, code := runCmd("check", "-")
		if code != wantCode {
			t.Errorf("%s on stdin: exit %d, want %d as from the file (stderr %q)", path, code, wantCode, errOut)
		}
		if out != strings.ReplaceAll(wantOut, path, "stdin") || errOut != strings.ReplaceAll(wantErr, path, "stdin") {
			t.Errorf("%s on stdin: output differs from the file's, the name aside:\n--- got:\n%s%s\n--- want:\n%s%s", path, out, errOut, wantOut, wantErr)
		}
	}
	// JSON is told by its content, as from a file without .json.
	checkStdin = strings.NewReader(`{"policies": [{"name": "a", "limit": 5, "window": "1m", "algorithm": "fixed_window", "key": ["ip"]}]}`)
	if _, errOut, code := runCmd("check", "-"); code != exitOK {
		t.Errorf("JSON on stdin: exit %d (%s), want 0", code, errOut)
	}
}
