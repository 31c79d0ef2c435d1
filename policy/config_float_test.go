package policy_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigExponentIsANumber: an unquoted number with an exponent (1e3,
// 2.5E+2), a float in YAML 1.2 as in JSON, is reported as a number. The
// YAML parser reads it as a string, so limit: 1e3 was "must be an
// integer, not a string" in a YAML file, and "not a number" for the same
// text in a JSON one. Quoted, it is a string still.
func TestConfigExponentIsANumber(t *testing.T) {
	const pol = "policies:\n  - name: a\n    window: 1s\n"
	for _, tc := range []struct{ name, doc, field, reason string }{
		{"e.yaml", pol + "    limit: 1e3\n", "policies[0].limit", "must be an integer, not a number with a fraction or an exponent (1e3)"},
		{"e.yaml", pol + "    limit: 2.5E+2\n", "policies[0].limit", "must be an integer, not a number with a fraction or an exponent (2.5E+2)"},
		{"e.yaml", pol + "    limit: -1e-3\n", "policies[0].limit", "must be an integer, not a number with a fraction or an exponent (-1e-3)"},
		{"e.yaml", `{"policies": [{"name": "a", "window": "1s", "limit": 1e2}]}`, "policies[0].limit", "must be an integer, not a number with a fraction or an exponent (1e2)"},
		{"e.json", `{"policies": [{"name": "a", "window": "1s", "limit": 1e2}]}`, "policies[0].limit", "must be an integer, not a number with a fraction or an exponent (1e2)"},
		{"e.yaml", pol + "    limit: 10e30\n", "policies[0].limit", "must be an integer, not a number with a fraction or an exponent (10e30)"},
		{"e.yaml", pol + "    limit: .05e1\n", "policies[0].limit", "must be an integer, not a number with a fraction or an exponent (.05e1)"},
		{"e.yaml", pol + "    limit: 1.09e1\n", "policies[0].limit", "must be an integer, not a number with a fraction or an exponent (1.09e1)"},
		{"e.yaml", pol + "    limit: 1.5\n", "policies[0].limit", "must be an integer, not a number with a fraction or an exponent (1.5)"},
		{"e.yaml", pol + "    limit: 90e9\n", "policies[0].limit", "must be an integer, not a number with a fraction or an exponent (90e9)"},
		{"e.yaml", pol + "    limit: \"1e3\"\n", "policies[0].limit", "must be an integer, not a string"},
		{"e.yaml", pol + "    limit: 1e\n", "policies[0].limit", "must be an integer, not a string"},
		{"e.yaml", "policies:\n  - name: a\n    limit: 1\n    window: 1e3\n", "policies[0].window", "1e3 has no unit; write it as 1s, 500ms, 1m or 24h"},
	} {
		_, err := policy.ParseConfig([]byte(tc.doc), tc.name)
		ces := policy.ConfigErrors(err)
		if len(ces) != 1 || ces[0].Field != tc.field || ces[0].Reason != tc.reason || ces[0].Line == 0 {
			t.Errorf("%s %q: %v; want one error at %s: %s", tc.name, tc.doc, err, tc.field, tc.reason)
		}
	}
}
