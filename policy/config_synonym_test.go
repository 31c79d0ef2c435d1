package policy_test

import "testing"

// TestConfigUnknownFieldSynonym: a field named as other rate limiters
// and their configuration files name it (period, rate, capacity, type,
// paths, rules...) is told the field it stands for, as a misspelt one
// is; each was answered with the list of fields alone. A field of the
// other level, or with an empty name, is told so.
func TestConfigUnknownFieldSynonym(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	const top = "version, headers, failure_mode, failure_retry_after, trusted_proxies, trusted_hops, ip_source, ipv6_prefix, ipv4_prefix, nat64_prefixes, policies"
	for _, tc := range []struct{ field, want string }{
		{"period: 1m", "window"},
		{"interval: 1m", "window"},
		{"per: 1m", "window"},
		{"duration: 1m", "window"},
		{"Time_Window: 1m", "window"},
		{"rate: 10", "limit"},
		{"requests: 10", "limit"},
		{"max_requests: 10", "limit"},
		{"quota: 10", "limit"},
		{"capacity: 10", "burst"},
		{"burst_size: 10", "burst"},
		{"type: token_bucket", "algorithm"},
		{"strategy: token_bucket", "algorithm"},
		{"paths: [/x]", "routes"},
		{"path: /x", "routes"},
		{"patterns: [/x]", "routes"},
		{"verbs: [GET]", "methods"},
		{"key_by: user", "key"},
	} {
		doc := pol + "    " + tc.field + "\n"
		want := `unknown field; did you mean "` + tc.want + `"? (want one of ` + policyFields + ")"
		wantErrors(t, tc.field, doc, []string{"policy: f.yaml:5:5: policies[0]." + fieldName(tc.field) + ": " + want})
	}
	for _, tc := range []struct{ field, want string }{
		{"rules: []", "policies"},
		{"limits: []", "policies"},
		{"proxies: [10.0.0.0/8]", "trusted_proxies"},
		{"hops: 1", "trusted_hops"},
	} {
		doc := tc.field + "\n" + pol
		want := `unknown field; did you mean "` + tc.want + `"? (want one of ` + top + ")"
		wantErrors(t, tc.field, doc, []string{"policy: f.yaml:1:1: " + fieldName(tc.field) + ": " + want})
	}
	wantErrors(t, "empty name", "'': 1\n"+pol, []string{`policy: f.yaml:1:1: a field with an empty name; want one of ` + top})
	wantErrorsIn(t, "empty name json", "f.json", `{"policies": [{"name": "a", "limit": 1, "window": "1s", "": 2}]}`,
		[]string{`policy: f.json:1:57: policies[0]: a field with an empty name; want one of ` + policyFields})
}

// fieldName returns the name of "name: value".
func fieldName(field string) string {
	for i := range len(field) {
		if field[i] == ':' {
			return field[:i]
		}
	}
	return field
}
