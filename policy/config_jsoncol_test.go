package policy_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigJSONColumnCountsCharacters: a JSON file's error columns count
// characters, as a YAML file's do (and as editors show them), so that one
// configuration written in either format has its errors at the same
// columns. The JSON loader counted bytes: after a route such as
// "/éditions" on the same line, every column was one further right per
// two-byte character than the YAML loader, and the editor, said.
func TestConfigJSONColumnCountsCharacters(t *testing.T) {
	for _, tc := range []struct {
		doc, at string // at: the text the error is at (its first occurrence)
	}{
		{`{"policies": [{"name": "a", "routes": ["/éditions/ü"], "limit": 0, "window": "1m"}]}`, `0,`},
		{`{"policies": [{"name": "a", "routes": ["/日本"], "limit": 1, "window": "1m", "bogus": 1}]}`, `"bogus"`},
		{"{\"policies\": [{\"name\": \"a\", \"routes\": [\"/ö\",\n  \"/ü\"], \"limit\": 0, \"window\": \"1m\"}]}", `0,`}, // the second line
		{`{"a": "é", "b": x}`, `x}`}, // a syntax error
	} {
		i := strings.Index(tc.doc, tc.at)
		line := 1 + strings.Count(tc.doc[:i], "\n")
		col := 1 + utf8.RuneCountInString(tc.doc[strings.LastIndex(tc.doc[:i], "\n")+1:i])
		_, err := policy.ParseConfig([]byte(tc.doc), "c.json")
		ces := policy.ConfigErrors(err)
		if len(ces) == 0 || ces[0].Line != line || ces[0].Column != col {
			t.Errorf("ParseConfig(%q) = %v; want the first error at %d:%d", tc.doc, err, line, col)
		}
	}
}
