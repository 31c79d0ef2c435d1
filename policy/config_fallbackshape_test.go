package policy_test

import "testing"

// TestConfigFallbackShape: a fallback that is neither a key part nor a
// list of keys is told what a fallback is: an empty list was "must be a
// key part or a non-empty list of keys, not a list", of a list, and null
// or a number "must be a list of strings", which a list of keys
// ([[user, ip], ip]) is not.
func TestConfigFallbackShape(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n    key: user\n"
	for _, tc := range []struct{ fallback, want string }{
		{"[]", `policy: f.yaml:6:15: policies[0].fallback: is empty; want a key part or a list of keys`},
		{"~", `policy: f.yaml:6:15: policies[0].fallback: must be a key part or a non-empty list of keys, not null`},
		{"5", `policy: f.yaml:6:15: policies[0].fallback: must be a key part or a non-empty list of keys, not an integer`},
		{"true", `policy: f.yaml:6:15: policies[0].fallback: must be a key part or a non-empty list of keys, not a boolean`},
	} {
		wantErrors(t, tc.fallback, pol+"    fallback: "+tc.fallback+"\n", []string{tc.want})
	}
}
