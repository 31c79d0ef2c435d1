package policy_test

import "testing"

// TestConfigBraceInFlowValueHint: a route pattern with a wildcard written
// unquoted in a flow list (routes: [/users/{id}]) is not the string it
// looks like: within [ ] a '{' opens a mapping, and the parser's error
// (',' or ']' must be specified) did not say so. The error now says to
// quote the value. A '{' that opens a mapping where one may start is left
// to the parser's words.
func TestConfigBraceInFlowValueHint(t *testing.T) {
	const head = "policies:\n  - name: a\n    limit: 5\n    window: 1s\n"
	const hint = ` (a '{' or '[' within a value inside [ ] or { } opens a collection: quote the value, as ["/users/{id}"])`
	for _, tc := range []struct{ name, doc, want string }{
		{"a list", head + "    routes: [/users/{id}]\n", "5:21 : invalid YAML: ',' or ']' must be specified" + hint},
		{"after a method", head + "    routes: [GET /a/{id}, /b]\n", "5:21 : invalid YAML: ',' or ']' must be specified" + hint},
		{"a chi regexp", head + "    routes: [/a/{id:[0-9]+}]\n", "5:17 : invalid YAML: ',' or ']' must be specified" + hint},
		{"a flow mapping", "policies:\n  - {name: a, limit: 5, window: 1s, routes: /a/{id}}\n", "2:48 : invalid YAML: ',' or '}' must be specified" + hint},
		// A bracket after a blank opens a collection where the file may
		// mean one: the parser's words alone.
		{"a mapping after a blank", "policies: [{name: a} {name: b}]\n", "1:22 : invalid YAML: ',' or ']' must be specified"},
		{"a list after a blank", "policies: [a [b]]\n", "1:14 : invalid YAML: ',' or ']' must be specified"},
	} {
		t.Run(tc.name, func(t *testing.T) { wantRefused(t, tc.doc, "b.yaml", []string{tc.want}) })
	}
}
