package policy

import (
	"strings"
	"testing"
)

// TestCheckIndentEveryLine: every line's indentation is checked, not only
// the first's (leading spaces and "- " entries, at most 4·maxNesting), at
// the line and column where it goes too deep; characters after a line's
// first other one do not count, nor does a '-' without a space after it or
// one ending the document.
func TestCheckIndentEveryLine(t *testing.T) {
	deep := strings.Repeat(" ", 4*maxNesting+1)
	for _, tc := range []struct {
		name      string
		doc       string
		line, col int // 0: accepted
	}{
		{"first line", deep + "a: 1", 1, 4*maxNesting + 1},
		{"second line", "a:\n" + deep + "b: 1", 2, 4*maxNesting + 1},
		{"third line", "a: 1\nb: 2\n" + deep + "c: 3", 3, 4*maxNesting + 1},
		{"entries", "a:\n" + strings.Repeat("- ", 2*maxNesting+1) + "x", 2, 4*maxNesting + 1},
		{"at the bound", "a:\n" + deep[1:] + "b: 1", 0, 0},
		{"words", "a: " + strings.Repeat("b ", 4*maxNesting), 0, 0},
		{"word runs", strings.Repeat("b ", 4*maxNesting), 0, 0},
		{"dashes", strings.Repeat("-", 4*maxNesting+1), 0, 0},
		{"dash at the end", "a:\n-", 0, 0},
	} {
		err := checkIndent([]byte(tc.doc), "f.yaml")
		if tc.line == 0 {
			if err != nil {
				t.Errorf("%s: %v, want accepted", tc.name, err)
			}
			continue
		}
		ce, ok := err.(*ConfigError)
		if !ok || ce.Line != tc.line || ce.Column != tc.col || ce.File != "f.yaml" {
			t.Errorf("%s: %v, want an error at f.yaml:%d:%d", tc.name, err, tc.line, tc.col)
		}
	}
}

// TestNodeBoundExact: a document of exactly maxConfigNodes nodes is read,
// in YAML and in JSON, and one more is refused, counting each alias as
// every node its anchor stands for (the anchor's list and its items, the
// alias itself taking the list's place), whether the last node is a
// scalar or an alias.
func TestNodeBoundExact(t *testing.T) {
	items := func(s string, n int) string { return strings.Repeat(s+", ", n) }
	for _, tc := range []struct {
		name  string
		parse func([]byte, string) (*cnode, error)
		doc   func(extra int) string // extra: nodes beyond maxConfigNodes
	}{
		// The list and its items.
		{"scalars", parseYAML, func(extra int) string { return "[" + items("x", maxConfigNodes-1+extra) + "]" }},
		{"JSON", parseJSON, func(extra int) string { return "[" + items("1", maxConfigNodes-2+extra) + "1]" }},
		// The outer list (1), the fillers, the anchor (1) with its list of
		// 99 items (100), and 198 aliases of 100 nodes each, the last one
		// crossing the bound: 1 + f + 101 + 19,800 = 20,000 for f = 98.
		{"aliases", parseYAML, func(extra int) string {
			return "[" + items("y", 98+extra) + "&a [" + items("x", 99) + "], " + items("*a", 198) + "]"
		}},
	} {
		if _, err := tc.parse([]byte(tc.doc(0)), "f.yaml"); err != nil {
			t.Errorf("%s: %d nodes: %v, want read", tc.name, maxConfigNodes, err)
		}
		_, err := tc.parse([]byte(tc.doc(1)), "f.yaml")
		if ce, ok := err.(*ConfigError); !ok || !strings.Contains(ce.Reason, "too large") {
			t.Errorf("%s: %d nodes: %v, want too large", tc.name, maxConfigNodes+1, err)
		}
	}
}
