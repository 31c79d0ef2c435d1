package policy_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigProblemsShowInvisibleCharacters: a key quoted in YAML or
// named in JSON went into the problem's field path as the file spelt it
// when the characters it held were not control characters but other
// invisible ones: a zero-width space made "li<ZWSP>mit: unknown field;
// want one of ..., limit, ..." (a field refused as one it lists, on the
// screen), and a right-to-left override (U+202E) turned the rest of the
// line of `ratekeeper check`, or of the reload log, around. Every
// character that is not printable (strconv.IsPrint: a format character, a
// space other than U+0020) is written as a Go escape, as the values a
// reason quotes are.
func TestConfigProblemsShowInvisibleCharacters(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	for _, tc := range []struct{ name, file, doc, field string }{
		{"a zero-width space in a JSON name", "c.json", "{\"policies\": [{\"name\": \"a\", \"li\u200bmit\": 1, \"window\": \"1s\"}]}", `policies[0].li\u200bmit`},
		{"a right-to-left override in a quoted YAML key", "c.yaml", pol + "    \"me\u202ethods\": [GET]\n", `policies[0].me\u202ethods`},
		{"a non-breaking space in a quoted YAML key, twice", "c.yaml", "\"x\u00a0\": 1\n\"x\u00a0\": 2\n" + pol, `x\u00a0`},
	} {
		_, err := policy.ParseConfig([]byte(tc.doc), tc.file)
		errs := policy.ConfigErrors(err)
		found := false
		for _, ce := range errs {
			if s := ce.Error(); strings.ContainsFunc(s, func(r rune) bool { return !strconv.IsPrint(r) }) {
				t.Errorf("%s: problem %q holds a character that does not print", tc.name, s)
			}
			found = found || ce.Field == tc.field
		}
		if !found {
			t.Errorf("%s: problems %q; want one at field %q", tc.name, err, tc.field)
		}
	}
}
