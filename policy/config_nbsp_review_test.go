package policy_test

import "testing"

// TestConfigUnicodeSpaceOutsideQuotesIsNamed: a space other than U+0020
// (a non-breaking space, as text copied from a web page or a chat holds)
// or a zero-width one, where YAML wants a blank, is text to YAML: it
// glues a key to its value, makes an indentation that is no indentation,
// or ends a value with a character nobody sees. The error was about
// something else, at a place where the file looks right: "non-map value
// is specified" for "limit:<NBSP>10", "mapping value is not allowed in
// this context" for a list indented with them, "must be an integer, not
// a string" for "limit: 10<NBSP>", and "li<ZWSP>mit: unknown field; want
// one of ..., limit, ...". Each is now an error at the unquoted text
// holding the character, naming it. Inside quotes or a block scalar it
// is the file's choice, judged as any other character.
func TestConfigUnicodeSpaceOutsideQuotesIsNamed(t *testing.T) {
	const head = "policies:\n  - name: a\n    limit: 10\n    window: 1s\n"
	const why = ", which YAML reads as text, not as a blank: write a space (or quote the value if the character is meant)"
	const whyZero = ", which YAML reads as text: delete it (or quote the value if the character is meant)"
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"between a key and its value", "policies:\n  - name: a\n    limit:\u00a010\n    window: 1s\n",
			[]string{`3:5 : a non-breaking space (U+00A0) in "limit:\u00a010"` + why}},
		{"indenting a list", "policies:\n\u00a0\u00a0- name: a\n    limit: 10\n    window: 1s\n",
			[]string{`2:1 : a non-breaking space (U+00A0) in "\u00a0\u00a0- name"` + why}},
		{"after a value", "policies:\n  - name: a\n    limit: 10\u00a0\n    window: 1s\n",
			[]string{`3:12 : a non-breaking space (U+00A0) in "10\u00a0"` + why}},
		{"a zero-width space in a key", head + "    me\u200bthods: [GET]\n",
			[]string{`5:5 : a zero-width character (U+200B) in "me\u200bthods"` + whyZero}},
		{"an ideographic space in a flow list", head + "    key: [ip,\u3000user]\n",
			[]string{`5:14 : a space (U+3000) in "\u3000user"` + why}},
	} {
		t.Run(tc.name, func(t *testing.T) { wantRefused(t, tc.doc, "c.yaml", tc.want) })
	}
	// Quoted, in a block scalar, and in a comment, it is left to what
	// reads the value: a comment is no value, and a route refuses it
	// (TestRoutePastedRunes), with its own reason.
	wantAccepted(t, "# per\u00a0client\n")
	wantRouteRefused(t, "U+00A0 in its path", "routes: [\"/caf\u00e9\u00a0menu\"]\n", "routes:\n      - >-\n        /caf\u00e9\u00a0menu\n")
}
