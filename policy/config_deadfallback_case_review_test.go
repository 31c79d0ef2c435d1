package policy_test

import (
	"testing"
)

// TestConfigDeadFallbackHeaderNameCase: header names are case-insensitive
// (keyfunc.Header reads the canonical name), so a fallback needing
// header:x-a after key header:X-A is missing whenever that key is, as dead
// as one spelt the same way; the fallback check compared the parts as
// written and accepted it. Cookie names are case-sensitive (net/http
// matches them exactly): cookie:s after cookie:S stays a live fallback.
func TestConfigDeadFallbackHeaderNameCase(t *testing.T) {
	const head = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"lower case after canonical", head + "    key: header:X-A\n    fallback: header:x-a\n",
			[]string{"6:15 policies[0].fallback: is never used: it needs header:X-A too, so it is missing whenever key header:X-A is"}},
		{"joined", head + "    key: [ip, header:x-login-user]\n    fallback: [[header:X-LOGIN-USER, ip], ip]\n",
			[]string{"6:16 policies[0].fallback[0]: is never used: it needs ip and header:x-login-user too, so it is missing whenever key ip+header:x-login-user is"}},
		{"after an earlier fallback", head + "    key: user\n    fallback: [header:X-Tenant, header:x-tenant, ip]\n",
			[]string{"6:33 policies[0].fallback[1]: is never used: it needs header:X-Tenant too, so it is missing whenever fallback[0] header:X-Tenant is"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantRefused(t, tc.doc, "c.yaml", tc.want)
		})
	}
	wantAccepted(t,
		"key: cookie:S\n    fallback: cookie:s\n",
		"key: header:X-A\n    fallback: header:X-B\n",
		"key: [header:X-A, ip]\n    fallback: header:x-b\n",
	)
}
