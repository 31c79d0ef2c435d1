package policy_test

import (
	"strings"
	"testing"
	"unicode"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigProblemsHoldNoControlCharacters: a key the decoder does not
// know, or knows written twice, went into the problem's field path as the
// file spelt it, and a key part read as a mapping into its reason: an
// escape sequence or a line break in a quoted YAML key or JSON name then
// reached the terminal of `ratekeeper check` and the reload log as it is
// (the parser's own messages are escaped already). Every such character is
// written as a Go escape.
func TestConfigProblemsHoldNoControlCharacters(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	for _, tc := range []struct{ name, file, doc, field, reason string }{
		{"unknown top-level field", "c.yaml", "\"\\e[31mX\\nY\": 1\n" + pol, `\x1b[31mX\nY`, ""},
		{"unknown policy field", "c.yaml", pol + "    \"lim\\e[2Jit\": 3\n", `policies[0].lim\x1b[2Jit`, ""},
		{"field written twice", "c.json", "{\"\\u0007x\": 1, \"\\u0007x\": 2, \"policies\": [{\"name\": \"a\", \"limit\": 1, \"window\": \"1s\"}]}", `\ax`, ""},
		{"key part read as a mapping", "c.yaml", pol + "    key: [ip, {header: \"a\\e[2Jb\"}]\n", "policies[0].key[1]", `(header: a\x1b[2Jb)`},
	} {
		_, err := policy.ParseConfig([]byte(tc.doc), tc.file)
		errs := policy.ConfigErrors(err)
		if len(errs) == 0 {
			t.Errorf("%s: no error", tc.name)
			continue
		}
		found := false
		for _, ce := range errs {
			if strings.ContainsFunc(ce.Error(), unicode.IsControl) {
				t.Errorf("%s: problem %q holds a control character", tc.name, ce.Error())
			}
			if strings.HasSuffix(ce.Field, tc.field) && strings.Contains(ce.Reason, tc.reason) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: problems %q; want one at field %q whose reason holds %q", tc.name, err, tc.field, tc.reason)
		}
	}
}
