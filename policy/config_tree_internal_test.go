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
