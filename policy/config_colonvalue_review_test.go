package policy_test

import "testing"

// TestConfigColonInPlainValueHint: a value holding ": " written unquoted
// after a key on its line ("key: header: X-User", "ip_source: header:
// X-Real-IP", "name: login: strict") is not the string it looks like:
// YAML reads a mapping there, and the parser's error ("mapping value is
// not allowed in this context") did not say so, where the same key part
// in a list ("key: [ip, header: X-User]") is told to be written
// "header:X-User". The error now says that the value holds ": " and to
// quote it, or, for a header or cookie part, to drop the blank.
func TestConfigColonInPlainValueHint(t *testing.T) {
	const head = "policies:\n  - name: a\n    limit: 5\n    window: 1s\n"
	const msg = "invalid YAML: mapping value is not allowed in this context"
	for _, tc := range []struct{ name, doc, want string }{
		{"a header key part", head + "    key: header: X-User\n",
			"5:10 : " + msg + ` (the value holds ": ", which YAML reads as a mapping: write "header:X-User")`},
		{"a cookie key part", head + "    key: cookie:  sid\n",
			"5:10 : " + msg + ` (the value holds ": ", which YAML reads as a mapping: write "cookie:sid")`},
		{"a header ip_source", "trusted_proxies: [10.0.0.0/8]\nip_source: header: X-Real-IP\n" + head,
			"2:12 : " + msg + ` (the value holds ": ", which YAML reads as a mapping: write "header:X-Real-IP")`},
		{"a name", "policies:\n  - name: login: strict\n    limit: 5\n    window: 1s\n",
			"2:11 : " + msg + ` (the value holds ": ", which YAML reads as a mapping: quote the value)`},
	} {
		t.Run(tc.name, func(t *testing.T) { wantRefused(t, tc.doc, "c.yaml", []string{tc.want}) })
	}
}
