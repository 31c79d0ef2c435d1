// Package readmetest finds the code blocks of README.md that tests compare
// with what they run, so that a README example that drifts from the code
// fails a test.
package readmetest

import (
	"strings"
	"testing"
)

// BlockAfter returns the first fenced code block of kind ("yaml", "go",
// "" for a plain block) in readme after the paragraph starting with
// intro, lines as written. It fails tb when there is none.
func BlockAfter(tb testing.TB, readme, intro, kind string) string {
	tb.Helper()
	_, after, ok := strings.Cut(readme, "\n"+intro)
	if !ok {
		tb.Fatalf("README.md has no paragraph starting %q", intro)
	}
	_, after, ok = strings.Cut(after, "\n```"+kind+"\n")
	if !ok {
		tb.Fatalf("README.md has no %q block after %q", kind, intro)
	}
	block, _, _ := strings.Cut(after, "```")
	return block
}
