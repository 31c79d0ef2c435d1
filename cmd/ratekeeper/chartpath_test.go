package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestChartLineQuotesPath: the line naming the chart written (replay's
// "chart: PATH", the demo's "4. Chart ...: PATH") writes a path holding a
// character that is not graphic (a newline, an escape, a tab) quoted, as
// the report writes keys (quote.IfNeeded), so that the name can neither
// forge a line of output nor drive the terminal; a plain path as it is. It wrote any path raw: a
// --svg named "a\nall policies together: ..." added that line.
func TestChartLineQuotesPath(t *testing.T) {
	dir := t.TempDir()
	forged := "all policies together: 0 requests, 0 rejected"
	for _, name := range []string{"a\n" + forged + "\n.svg", "b\x1b[2J.svg", "c\t.svg", "plain d.svg"} {
		path := filepath.Join(dir, name)
		want := path
		if name != "plain d.svg" {
			want = strconv.Quote(path)
		}
		for _, tc := range []struct {
			args   []string
			prefix string
		}{
			{[]string{"replay", "--quiet", "--svg", path, "--config", "testdata/rules.yaml", "testdata/access.log"}, "chart: "},
			{[]string{"demo", "--svg", path}, "4. Chart of admitted and rejected requests per algorithm ("},
		} {
			out, errOut, code := runCmd(tc.args...)
			if code == exitUsage {
				t.Fatalf("%s --svg %q: exit %d; stderr %q", tc.args[0], name, code, errOut)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s --svg %q: no chart written: %v", tc.args[0], name, err)
			}
			var line string
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, tc.prefix) {
					line = l
				}
				if l == forged {
					t.Errorf("%s --svg %q: the chart's name forged the line %q", tc.args[0], name, l)
				}
			}
			if !strings.HasSuffix(line, " "+want) || strings.ContainsAny(line, "\x1b\t") {
				t.Errorf("%s --svg %q: the chart line is %q, want it to end with %s", tc.args[0], name, line, want)
			}
			os.Remove(path)
		}
	}
}
