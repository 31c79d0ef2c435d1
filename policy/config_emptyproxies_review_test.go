package policy_test

import "testing"

// TestConfigTrustedProxiesEmptyRefused: trusted_proxies: [] (a list left
// empty by a template, an environment variable unset) declares no proxy,
// as keyfunc.TrustedProxies with no prefix does, which keyfunc.IP refuses.
// The file loaded, and its ip key read every peer as the client: behind
// the proxy the file meant to name, one bucket for all clients. It is
// refused at the field, and with ip_source only there (ip_source is not
// reported as lacking the proxies the file tried to declare).
func TestConfigTrustedProxiesEmptyRefused(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	const want = "1:18 trusted_proxies: is empty; list the proxies' addresses or prefixes, or leave trusted_proxies out when clients connect directly"
	wantRefused(t, "trusted_proxies: []\n"+pol, "t.yaml", []string{want})
	wantRefused(t, "trusted_proxies: []\nip_source: forwarded\n"+pol, "t.yaml", []string{want})
	wantRefused(t, `{"trusted_proxies": [], "policies": [{"name": "a", "limit": 1, "window": "1s"}]}`, "t.json",
		[]string{"1:21 trusted_proxies: is empty; list the proxies' addresses or prefixes, or leave trusted_proxies out when clients connect directly"})
}
