package policy_test

import (
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigIPSourceListHeader: ip_source header:X-Forwarded-For (or
// header:Forwarded) is the config's form of keyfunc.FromHeader on a list
// header; it was accepted, and a chain of two entries then made every such
// request a 400. The file is refused at ip_source, pointing to the source
// that reads the list.
func TestConfigIPSourceListHeader(t *testing.T) {
	for _, tc := range []struct{ source, want string }{
		{"header:X-Forwarded-For", "x-forwarded-for"},
		{"header:Forwarded", "forwarded"},
	} {
		src := "trusted_proxies: [10.0.0.0/8]\nip_source: " + tc.source + "\npolicies:\n  - {name: a, limit: 1, window: 1m}\n"
		_, err := policy.ParseConfig([]byte(src), "x.yaml")
		if err == nil {
			t.Errorf("ip_source: %s: ParseConfig = nil error, want one at ip_source", tc.source)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "x.yaml:2:") || !strings.Contains(msg, "ip_source") || !strings.Contains(msg, "ip_source: "+tc.want) {
			t.Errorf("ip_source: %s: ParseConfig error %q, want it at x.yaml:2, naming ip_source and %q", tc.source, msg, "ip_source: "+tc.want)
		}
	}
}
