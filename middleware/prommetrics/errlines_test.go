package prommetrics_test

import (
	"strings"
	"testing"
)

// wantErrLines fails t unless err has n lines, the i-th holding want[i].
func wantErrLines(t *testing.T, err error, n int, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %d lines", n)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != n {
		t.Fatalf("error of %d lines, want %d:\n%v", len(lines), n, err)
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d: %q, want it to hold %q", i+1, lines[i], w)
		}
	}
}
