package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCheckReportQuotesNames: check's report on standard output names
// the file (its "valid" line, each problem, the count of problems) quoted
// when the name holds a character other than a graphic one, as replay's
// report does, and so does its table a route whose chi regexp holds one
// (the policy package takes any character inside the braces): one line
// of the report stays one line, and no escape reaches the terminal. A
// plain name prints as it did (the goldens).
func TestCheckReportQuotesNames(t *testing.T) {
	for _, src := range []string{"testdata/rules.yaml", "testdata/bad.yaml"} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		plain, forged := filepath.Join(dir, "plain"), filepath.Join(dir, forgedName)
		for _, p := range []string{plain, forged} {
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		plainOut, _, plainCode := runCmd("check", plain)
		out, errOut, code := runCmd("check", forged)
		if strings.Contains(plainOut, `"`+plain) {
			t.Errorf("check %s: a plain name is quoted:\n%s", src, plainOut)
		}
		want := strings.ReplaceAll(plainOut, plain, strconv.Quote(forged))
		if code != plainCode || out != want {
			t.Errorf("check (%s as %q): exit %d, stdout:\n%s\nwant exit %d, stdout:\n%s\n(stderr %q)", src, forged, code, out, plainCode, want, errOut)
		}
		if strings.Contains(out, "\x1b") {
			t.Errorf("check (%s): stdout holds ESC raw: %q", src, out)
		}
	}

	// A route whose regexp holds a newline and an escape.
	cfg := filepath.Join(t.TempDir(), "routes.yaml")
	yaml := "policies:\n  - name: x\n    limit: 1\n    window: 1s\n    routes: [\"/a/{id:x\\ny\\e}\"]\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runCmd("check", cfg)
	if code != exitOK {
		t.Fatalf("check %s: exit %d; stderr %q", yaml, code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "x ") || !strings.Contains(last, `routes "/a/{id:x\ny\x1b}"`) || !strings.HasSuffix(last, "  2") {
		t.Errorf("check: the policy's line of the table is %q, want it to name the route quoted, routes \"/a/{id:x\\ny\\x1b}\", and end with its line, 2:\n%s", last, out)
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("check: stdout holds ESC raw: %q", out)
	}
}
