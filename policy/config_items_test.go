package policy_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigListItemErrorAt: a bad entry of a list (trusted_proxies, the
// parts of a key) is reported at its own position (and index, where the
// field has one), also after an entry that is not a string. The entries
// that were strings were numbered among themselves: in [1, bad], "bad" was
// reported as entry [0], at the position of the 1.
func TestConfigListItemErrorAt(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	for _, tc := range []struct {
		doc       string
		field     string
		line, col int
	}{
		{"trusted_proxies: [1, bad]\n" + pol, "trusted_proxies[1]", 1, 22},
		{"trusted_proxies: [10.0.0.0/8, bad]\n" + pol, "trusted_proxies[1]", 1, 31},
		{pol + "    key: [5, bogus]\n", "policies[0].key", 5, 14},
		{pol + "    key: [ip, bogus]\n", "policies[0].key", 5, 15},
		{pol + "    key: bogus\n", "policies[0].key", 5, 10},
		{pol + "    fallback: [ip, [user, 5, bogus]]\n", "policies[0].fallback[1]", 5, 30},
	} {
		_, err := policy.ParseConfig([]byte(tc.doc), "l.yaml")
		errs := policy.ConfigErrors(err)
		var found bool
		for _, ce := range errs {
			if ce.Field == tc.field && ce.Line == tc.line && ce.Column == tc.col {
				found = true
			}
		}
		if !found {
			t.Errorf("ParseConfig(%q) = %v; want an error at %s, %d:%d", tc.doc, err, tc.field, tc.line, tc.col)
		}
		for _, ce := range errs {
			if ce.Field != tc.field && ce.Reason != "must be a string, not an integer" {
				t.Errorf("ParseConfig(%q): unexpected error %v", tc.doc, ce)
			}
		}
	}
}
