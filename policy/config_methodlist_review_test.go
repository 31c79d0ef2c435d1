package policy_test

import "testing"

// TestConfigMethodsWrittenAsOneString: methods written as one string in a
// YAML file, "methods: GET, POST" (block style, as a list is written in
// prose) or "[GET POST]", were refused as "not a method token", where
// methods joined by a token character ("GET|POST") are told to be listed
// each: the check for joined methods, which splits on any character a
// method does not hold, was reached only by strings that are tokens.
// Key parts written so are told the same ("write several parts as a
// list").
func TestConfigMethodsWrittenAsOneString(t *testing.T) {
	const head = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	wantRefused(t, head+"    methods: GET, POST\n", "m.yaml", []string{
		`5:14 policies[0].methods: "GET, POST" joins several methods: list each ("GET", "POST")`,
	})
	wantRefused(t, head+"    methods: [GET POST, put]\n", "m.yaml", []string{
		`5:15 policies[0].methods: "GET POST" joins several methods: list each ("GET", "POST")`,
		`5:25 policies[0].methods: "put": methods are case-sensitive and clients send "PUT"`,
	})
	// Not methods joined: not a token, as before.
	wantRefused(t, head+"    methods: [\"GE T\"]\n", "m.yaml", []string{
		`5:15 policies[0].methods: "GE T" is not a method token`,
	})
}
