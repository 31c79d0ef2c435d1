package policy_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigTrustedProxiesEveryAddress: a trusted_proxies entry holding
// every address of its family (0.0.0.0/0, ::/0, and ::ffff:0:0/96, the
// IPv4 one mapped) makes any client a proxy, and the client whatever it
// writes of the other family (keyfunc refuses it). The file's error names
// that entry at its position and points to trusted_hops, and it is the
// only error (not also one of ip_source, which the file did not set).
func TestConfigTrustedProxiesEveryAddress(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	for _, s := range []string{"0.0.0.0/0", "::/0", "::ffff:0:0/96"} {
		doc := "trusted_proxies: [10.0.0.0/8, \"" + s + "\"]\n" + pol
		_, err := policy.ParseConfig([]byte(doc), "t.yaml")
		errs := policy.ConfigErrors(err)
		if len(errs) != 1 || errs[0].Field != "trusted_proxies[1]" || errs[0].Line != 1 || errs[0].Column != 31 ||
			!strings.Contains(errs[0].Reason, "every address") || !strings.Contains(errs[0].Reason, "trusted_hops") {
			t.Errorf("%s: ParseConfig = %v; want one error at trusted_proxies[1], 1:31, saying it trusts every address and pointing to trusted_hops", s, err)
		}
	}
	// The narrowest prefixes still load.
	if _, err := policy.ParseConfig([]byte("trusted_proxies: [10.0.0.0/8, \"::1\", 0.0.0.0/1]\n"+pol), "t.yaml"); err != nil {
		t.Errorf("ParseConfig with real prefixes: %v", err)
	}
}
