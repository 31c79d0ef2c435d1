package policy_test

import "testing"

// TestConfigTypographicQuotesNamed: a YAML value written between
// typographic quotes (an editor's or a word processor's "smart quotes",
// text pasted from a document) is not quoted: YAML quotes with " and '
// only, and reads the quotes as part of the text. The errors were about
// the text: a route in them was said to name a host, "“", and told to be
// written "/login”", and a key part was an unknown one. Each is now an
// error at the value, naming the quote and the value written with
// straight quotes.
func TestConfigTypographicQuotesNamed(t *testing.T) {
	const head = "policies:\n  - name: a\n    limit: 10\n    window: 1m\n"
	const why = `, which YAML reads as text: quote with " or ' instead`
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"a route in a flow list", head + "    routes: [\u201c/login\u201d]\n",
			[]string{`5:14 : a typographic quote (U+201C) around "“/login”"` + why + ` ("/login")`}},
		{"a key part", head + "    key: \u201cheader:X-User\u201d\n",
			[]string{`5:10 : a typographic quote (U+201C) around "“header:X-User”"` + why + ` ("header:X-User")`}},
		{"single ones", "policies:\n  - name: \u2018a\u2019\n    limit: 10\n    window: 1m\n",
			[]string{`2:11 : a typographic quote (U+2018) around "‘a’"` + why + ` ("a")`}},
		{"a closing one alone", head + "    routes: [/login\u201d]\n",
			[]string{`5:14 : a typographic quote (U+201D) around "/login”"` + why + ` ("/login")`}},
	} {
		t.Run(tc.name, func(t *testing.T) { wantRefused(t, tc.doc, "c.yaml", tc.want) })
	}
	// Inside a value, or quoted, or in a comment, it is text, left to
	// what reads the value: a comment is no value, and a route refuses it
	// (TestRoutePastedRunes), with its own reason.
	wantAccepted(t, "# the \u201clogin\u201d policy\n")
	wantRouteRefused(t, "typographic quote (U+201C) in its path", "routes: [\"/\u201cquoted\u201d\"]\n")
}
