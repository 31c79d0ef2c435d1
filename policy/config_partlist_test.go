package policy_test

import "testing"

// TestConfigPartsWrittenAsOneString: key: ip,user (or "ip user", ip+user)
// is one YAML string, a part named "ip,user" that does not exist; the
// error listed the known parts and left the user to guess that a key of
// several parts is a list. It now says how to write it: [ip, user]. A
// string whose pieces are not all parts keeps the plain error.
func TestConfigPartsWrittenAsOneString(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	const known = "want one of cookie:NAME, global, header:NAME, ip, method, route, user"
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"comma", pol + "    key: ip,user\n", []string{
			`policy: f.yaml:5:10: policies[0].key: unknown key part "ip,user"; ` + known + `; write several parts as a list: [ip, user]`,
		}},
		{"comma and space, header part", pol + "    key: \"ip, header:X-Api-Key\"\n", []string{
			`policy: f.yaml:5:10: policies[0].key: unknown key part "ip, header:X-Api-Key"; ` + known + `; write several parts as a list: [ip, header:X-Api-Key]`,
		}},
		{"plus in a fallback", pol + "    key: user\n    fallback: ip+route\n", []string{
			`policy: f.yaml:6:15: policies[0].fallback: unknown key part "ip+route"; ` + known + `; write several parts as a list: [ip, route]`,
		}},
		{"space", pol + "    key: ip user\n", []string{
			`policy: f.yaml:5:10: policies[0].key: unknown key part "ip user"; ` + known + `; write several parts as a list: [ip, user]`,
		}},
		{"a piece no part", pol + "    key: ip,bogus\n", []string{
			`policy: f.yaml:5:10: policies[0].key: unknown key part "ip,bogus"; ` + known,
		}},
	} {
		wantErrors(t, tc.name, tc.doc, tc.want)
	}
}
