package policy_test

import (
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigTrustedProxiesHostBitsRefused: a trusted_proxies entry with
// bits set past its prefix length ("10.0.0.5/16", as `ip addr` shows an
// interface) is ambiguous: the proxy's own address, or its network. It
// was read as the network, silently, so every other host of that /16 (an
// application server, a client on the same VPC) was trusted to name any
// client in X-Forwarded-For. It is refused at the entry, naming both
// readings; a masked prefix and a bare address still load.
func TestConfigTrustedProxiesHostBitsRefused(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	wantRefused(t, "trusted_proxies: [10.0.0.0/8, 10.1.0.5/16, \"2001:db8::7/64\"]\n"+pol, "t.yaml", []string{
		`1:31 trusted_proxies[1]: "10.1.0.5/16" has bits set past its /16, trusting the whole network 10.1.0.0/16; write 10.1.0.5 for the proxy alone, or 10.1.0.0/16 for its network`,
		`1:44 trusted_proxies[2]: "2001:db8::7/64" has bits set past its /64, trusting the whole network 2001:db8::/64; write 2001:db8::7 for the proxy alone, or 2001:db8::/64 for its network`,
	})
	for _, ok := range []string{"10.1.0.0/16", "10.1.0.5", "10.1.0.5/32", "\"2001:db8::/64\"", "\"::ffff:10.1.0.0/112\""} {
		if _, err := policy.ParseConfig([]byte("trusted_proxies: ["+ok+"]\n"+pol), "t.yaml"); err != nil {
			t.Errorf("trusted_proxies: [%s]: %v", ok, err)
		}
	}
}
