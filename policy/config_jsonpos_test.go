package policy_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigJSONSyntaxErrorAt: a JSON syntax error is reported at the
// character at fault. Within a value (a bad literal, number, string or
// escape) the position was taken from the decoder's SyntaxError.Offset,
// which there counts only the bytes its scanner read for values so far,
// not the offset in the file: {"a": x} was reported at 1:5, not at the x
// (1:7), and an error deep in a file could be lines too early.
func TestConfigJSONSyntaxErrorAt(t *testing.T) {
	for _, tc := range []struct {
		doc       string
		line, col int
	}{
		{`x`, 1, 1},
		{`{"a": x}`, 1, 7},
		{`{"a": [1, x]}`, 1, 11},
		{`{"a": tru}`, 1, 10},
		{"{\"a\": \"\x01\"}", 1, 8},
		{`{"a": 1.}`, 1, 9},
		{`{"a": -}`, 1, 8},
		{`{"a": "\x"}`, 1, 9},
		{"{\n  \"policies\": [\n    {\"name\": \"a\", \"limit\": 1,\n     \"window\": tru}\n  ]\n}", 4, 19},
		// Misplaced tokens, right before too.
		{"{\n  \"policies\": [\n    {\"name\": \"a\", \"limit\": 1,\n     \"window\": 1s}\n  ]\n}", 4, 17},
		{`{"a": 1 x}`, 1, 9},
		{`{"a" x}`, 1, 6},
		{`{"a": [1 2]}`, 1, 10},
		{`{"a":1,}`, 1, 8},
		{`{x}`, 1, 2},
		{`[1: 2]`, 1, 3},
		{"{\n  \"policies\": [\n    {\"name\": \"a\",}\n  ]\n}", 3, 18},
	} {
		_, err := policy.ParseConfig([]byte(tc.doc), "c.json")
		ces := policy.ConfigErrors(err)
		if len(ces) != 1 || ces[0].Line != tc.line || ces[0].Column != tc.col || !strings.Contains(ces[0].Reason, "invalid JSON") {
			t.Errorf("%q: %v; want invalid JSON at %d:%d", tc.doc, err, tc.line, tc.col)
		}
	}
}
