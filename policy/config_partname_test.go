package policy_test

import "testing"

// TestConfigPartWithoutName: a key part header: or cookie: with no name
// was "unknown key part", as if header: were no part at all, and an
// ip_source of header: was told that "" is not a valid header name. Each
// now says the name is missing and how to write it, where it is, naming
// the field.
func TestConfigPartWithoutName(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"header in a list", pol + "    key: [ip, \"header:\"]\n", []string{
			`policy: f.yaml:5:15: policies[0].key: key part "header:" needs a header name: header:NAME`,
		}},
		{"cookie alone", pol + "    key: \"cookie:\"\n", []string{
			`policy: f.yaml:5:10: policies[0].key: key part "cookie:" needs a cookie name: cookie:NAME`,
		}},
		{"fallback", pol + "    key: user\n    fallback: \"header:\"\n", []string{
			`policy: f.yaml:6:15: policies[0].fallback: key part "header:" needs a header name: header:NAME`,
		}},
		{"ip_source", "trusted_proxies: [10.0.0.0/8]\nip_source: \"header:\"\n" + pol, []string{
			`policy: f.yaml:2:12: ip_source: "header:" needs a header name: header:NAME`,
		}},
		{"ip_source without proxies", "ip_source: \"header:\"\n" + pol, []string{
			`policy: f.yaml:1:12: ip_source: "header:" needs a header name: header:NAME`,
		}},
	} {
		wantErrors(t, tc.name, tc.doc, tc.want)
	}
}
