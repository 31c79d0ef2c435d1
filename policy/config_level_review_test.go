package policy_test

import "testing"

// TestConfigFieldAtTheOtherLevel: a policy's field written at the top
// level (a line dedented by mistake, or a file without "policies:") and a
// setting of the whole file written in a policy were "unknown field; want
// one of ...", a list that does not hold the field the file names, at
// the field the user knows to be right. The message now says at which
// level the field belongs.
func TestConfigFieldAtTheOtherLevel(t *testing.T) {
	const top = "unknown field here; a setting of the whole file: write it at the top level, outside policies"
	const pol = "unknown field here; a field of a policy: write it in an entry of policies"
	wantRefused(t, "policies:\n  - name: a\n    limit: 10\n    window: 1m\nalgorithm: token_bucket\n", "c.yaml", []string{
		"5:1 algorithm: " + pol,
	})
	wantRefused(t, "policies:\n  - name: a\n    limit: 10\n    window: 1m\n    headers: none\n", "c.yaml", []string{
		"5:5 policies[0].headers: " + top,
	})
	wantRefused(t, "name: a\nlimit: 10\nwindow: 1m\n", "c.yaml", []string{
		"1:1 name: " + pol,
		"1:1 policies: is missing; a configuration needs at least one policy",
		"2:1 limit: " + pol,
		"3:1 window: " + pol,
	})
	// A field of neither level is told the fields of its own.
	wantRefused(t, "policies:\n  - name: a\n    limit: 10\n    window: 1m\ncost: 2\n", "c.yaml", []string{
		"5:1 cost: unknown field; want one of version, headers, failure_mode, failure_retry_after, trusted_proxies, trusted_hops, ip_source, ipv6_prefix, ipv4_prefix, nat64_prefixes, policies",
	})
}
