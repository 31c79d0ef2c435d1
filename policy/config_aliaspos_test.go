package policy_test

import "testing"

// TestConfigAliasErrorAtAlias: a value given by an alias (*x) that is
// refused where the alias stands is reported at the alias, not at the
// anchor (&x) it names, which may be another field's value in another
// policy: burst: *x was reported at limit's 1.
func TestConfigAliasErrorAtAlias(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"scalar", "policies:\n  - {name: a, limit: &x 1, window: 1s, burst: *x}\n",
			"policy: f.yaml:2:47: policies[0].burst: applies only to token_bucket and leaky_bucket, not sliding_window"},
		{"mapping", "policies:\n  - &p {name: a, limit: 1, window: 1s}\n  - {name: b, limit: 1, window: 1s, key: *p}\n",
			"policy: f.yaml:3:42: policies[1].key: must be a list of strings, not a mapping"},
		{"list", "policies:\n  - name: a\n    limit: 1\n    window: 1s\n    methods: &l [GET]\n  - name: b\n    limit: 1\n    window: 1s\n    burst: *l\n",
			"policy: f.yaml:9:12: policies[1].burst: must be an integer, not a list"},
	} {
		wantErrors(t, tc.name, tc.doc, []string{tc.want})
	}
}
