package policy_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigTrustedProxiesNoPeerRefused: a trusted_proxies entry of the
// unspecified address (0.0.0.0 or ::, "any" where a server listens, so a
// likely spelling of "trust every proxy"), which no peer connects from,
// loaded, and trusted no proxy: behind the proxy meant, every client
// shared its address's allowance. It is refused at the entry; a prefix
// holding it with other addresses (0.0.0.0/8) stays the user's to judge.
func TestConfigTrustedProxiesNoPeerRefused(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	const unspec = "is the unspecified address (\"any\" where a server listens), which no peer connects from: it would trust no proxy; list the proxies' own addresses or prefixes"
	wantRefused(t, "trusted_proxies: [10.0.0.0/8, 0.0.0.0, \"::\", 0.0.0.0/32, \"::ffff:0.0.0.0\"]\n"+pol, "t.yaml", []string{
		`1:31 trusted_proxies[1]: "0.0.0.0" ` + unspec,
		`1:40 trusted_proxies[2]: "::" ` + unspec,
		`1:46 trusted_proxies[3]: "0.0.0.0/32" ` + unspec,
		`1:58 trusted_proxies[4]: "::ffff:0.0.0.0" ` + unspec,
	})
	for _, ok := range []string{"0.0.0.0/8", "10.0.0.0/8", "\"::1\"", "224.0.0.0/4", "\"::/1\""} {
		if _, err := policy.ParseConfig([]byte("trusted_proxies: ["+ok+"]\n"+pol), "t.yaml"); err != nil {
			t.Errorf("trusted_proxies: [%s]: %v", ok, err)
		}
	}
}
