package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// demoScenarios returns the seed scenarios the demo runs, as it prints
// them under its table ("boundary burst: 100/min, ..."), after checking
// that they are the table's rows, in its order.
func demoScenarios(t *testing.T) []string {
	t.Helper()
	out, errOut, code := runCmd("demo", "--svg", filepath.Join(t.TempDir(), "d.svg"))
	if code != exitOK {
		t.Fatalf("demo: exit %d, stderr %s", code, errOut)
	}
	_, section, ok := strings.Cut(out, "\n3. The algorithms on the seed scenarios")
	if !ok {
		t.Fatalf("demo prints no seed scenarios:\n%s", out)
	}
	section, _, _ = strings.Cut(section, "\n\n")
	lines := strings.Split(section, "\n")[2:] // past the heading and the table's header
	row := regexp.MustCompile(`^ +(\S.*?) +\d+ +\d+ +\d+ +\d+ +\d+$`)
	var rows, listed []string
	for _, l := range lines {
		if m := row.FindStringSubmatch(l); m != nil {
			rows = append(rows, m[1])
		} else if name, _, ok := strings.Cut(strings.TrimSpace(l), ": "); ok {
			listed = append(listed, strings.TrimSpace(l))
			if len(listed) > len(rows) || rows[len(listed)-1] != name {
				t.Fatalf("demo lists %q under a table whose rows are %q", l, rows)
			}
		}
	}
	if len(rows) == 0 || len(listed) != len(rows) {
		t.Fatalf("demo's table has rows %q, and lists %q under it:\n%s", rows, listed, section)
	}
	return listed
}

// docScenarios returns the scenarios doc lists: the lines after the first
// line that holds "seed scenarios" and ends with a colon, past blank lines
// and a Markdown fence, up to the next blank line or fence, trimmed.
func docScenarios(doc string) []string {
	lines := strings.Split(doc, "\n")
	i := slices.IndexFunc(lines, func(l string) bool {
		return strings.Contains(l, "seed scenarios") && strings.HasSuffix(l, ":")
	})
	if i < 0 {
		return nil
	}
	var out []string
	for _, l := range lines[i+1:] {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "```") {
			if out == nil {
				continue
			}
			break
		}
		out = append(out, l)
	}
	return out
}

// TestDemoScenariosDocumented: "ratekeeper demo --help", the command's
// package documentation (go doc) and the README list the seed scenarios
// the demo runs, each as the demo prints it, and no other. They listed
// the boundary burst and the bunched traffic, not the seed 004 buckets.
func TestDemoScenariosDocumented(t *testing.T) {
	want := demoScenarios(t)

	help, _, code := runCmd("demo", "--help")
	if code != exitOK {
		t.Fatalf("demo --help: exit %d", code)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, command, _ := strings.Cut(string(readme), "\n## The `ratekeeper` command\n")
	for _, doc := range []struct{ name, text string }{
		{"demo --help", help},
		{"the package documentation (main.go)", f.Doc.Text()},
		{"README.md, The ratekeeper command", command},
	} {
		got := docScenarios(doc.text)
		if got == nil {
			t.Errorf("%s lists no seed scenarios (a line with \"seed scenarios\" ending in a colon, then the list); the demo prints\n  %s", doc.name, strings.Join(want, "\n  "))
		} else if !slices.Equal(got, want) {
			t.Errorf("%s lists the seed scenarios\n  %s\nthe demo prints\n  %s", doc.name, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
}
