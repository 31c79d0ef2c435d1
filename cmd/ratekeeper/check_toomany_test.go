package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckTooManyProblems: a file with more problems than the loader
// reports (20) is summed up as more than 20, the 20 listed; the loader's
// closing "too many errors" entry is not one of its problems. check printed
// "21 problems" for a file with 25, the marker counted as the 21st.
func TestCheckTooManyProblems(t *testing.T) {
	for _, c := range []struct {
		problems int
		summary  string
	}{
		{20, "20 problems"},
		{21, "more than 20 problems; the first 20 are listed above"},
		{25, "more than 20 problems; the first 20 are listed above"},
	} {
		var b strings.Builder
		b.WriteString("policies:\n")
		for i := range c.problems {
			fmt.Fprintf(&b, "  - {name: p%d, limit: 1, window: 60}\n", i)
		}
		path := filepath.Join(t.TempDir(), "many.yaml")
		if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		out, errOut, code := runCmd("check", path)
		if code != exitFindings {
			t.Fatalf("%d problems: exit %d, want %d (stderr %q)", c.problems, code, exitFindings, errOut)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if got, want := lines[len(lines)-1], path+": "+c.summary; got != want {
			t.Errorf("%d problems: last line %q, want %q", c.problems, got, want)
		}
		listed := 0
		for _, l := range lines[:len(lines)-1] {
			if !strings.Contains(l, ".window: 60 has no unit") {
				t.Errorf("%d problems: line %q is not one of the file's problems", c.problems, l)
				continue
			}
			listed++
		}
		if want := min(c.problems, 20); listed != want {
			t.Errorf("%d problems: %d listed, want %d", c.problems, listed, want)
		}
	}
}
