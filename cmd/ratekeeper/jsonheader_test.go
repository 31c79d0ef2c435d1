package main

import (
	"strings"
	"testing"
)

// TestJSONHeaderFlagChecked: --json-header names a header once, in any
// case (two fields for one header would give it two values, read in the
// order of a map, so that a header key part took either at random), and
// names one that can be a header at all, and a field ("NAME=FIELD", both
// given): anything else is a usage error
// naming the flag and the name, before any replay.
func TestJSONHeaderFlagChecked(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--json-header", "x-agent=ua", "--json-header", "X-Agent=agent"}, "X-Agent given twice"},
		{[]string{"--json-header", "User-Agent=ua", "--json-header", "user-agent=ua"}, "User-Agent given twice"},
		{[]string{"--json-header", "X Agent=ua"}, `"X Agent" is not a header name`},
		{[]string{"--json-header", "X-Agent:=ua"}, `"X-Agent:" is not a header name`},
		{[]string{"--json-header", "X-Agent="}, "want NAME=FIELD"},
		{[]string{"--json-header", "=ua"}, "want NAME=FIELD"},
	} {
		args := append([]string{"replay", "--quiet", "--config", "testdata/rules.yaml"}, tc.flags...)
		out, errOut, code := runCmd(append(args, "testdata/access.jsonl")...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "-json-header") || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stdout %d bytes, stderr %q; want exit 2 saying %q", tc.flags, code, len(out), errOut, tc.want)
		}
	}
}
