package policy_test

import "testing"

// TestConfigIPSourceHostRefused: ip_source: header:Host loaded, and its
// ip key found no client for any request from a trusted proxy (net/http
// moves Host out of the header map), so every such request was refused
// 400. It is refused at ip_source, in the file's words (it was refused in
// keyfunc.IP's: IP: FromHeader("Host"): ... (to r.Host)).
func TestConfigIPSourceHostRefused(t *testing.T) {
	wantRefused(t, "trusted_proxies: [10.0.0.0/8]\nip_source: header:host\npolicies:\n  - {name: a, limit: 1, window: 1s}\n", "t.yaml", []string{
		`2:12 ip_source: header:host names the server the request is for, not the client; write the header your proxies set to the client's address (header:X-Real-IP), or x-forwarded-for or forwarded`,
	})
}
