package policy_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// TestConfigNAT64Prefixes: a server behind a stateless translator with a
// network-specific prefix (RFC 6052; keyfunc.NAT64Prefixes) sees every
// IPv4 client as an address of that prefix; grouped by ipv6_prefix, they
// all share one key. A file could not declare the prefix (nat64_prefixes
// was an unknown field), so a server configured by file put every IPv4
// client behind such a translator in one bucket. Declared, each client is
// keyed by the IPv4 address it embeds, grouped by ipv4_prefix.
func TestConfigNAT64Prefixes(t *testing.T) {
	const head = "policies:\n  - {name: per-ip, limit: 10, window: 1m}\n"
	cfg, err := policy.ParseConfig([]byte("nat64_prefixes: [2001:db8:64::/96]\nipv4_prefix: 24\n"+head), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if want := []netip.Prefix{netip.MustParsePrefix("2001:db8:64::/96")}; len(cfg.NAT64Prefixes) != 1 || cfg.NAT64Prefixes[0] != want[0] {
		t.Errorf("NAT64Prefixes = %v, want %v", cfg.NAT64Prefixes, want)
	}
	if !cfg.Stated("nat64_prefixes") {
		t.Error(`Stated("nat64_prefixes") = false for a file that sets it`)
	}
	for _, tc := range []struct{ remote, want string }{
		{"[2001:db8:64::808:801]:1234", "per-ip:8.8.8.0/24"}, // 8.8.8.1 through the translator
		{"[2001:db8:64::808:8fe]:1234", "per-ip:8.8.8.0/24"},
		{"[2001:db8:64::101:101]:1234", "per-ip:1.1.1.0/24"},
		{"[2001:db8:65::1]:1234", "per-ip:2001:db8:65::/64"}, // not the translator's
	} {
		key, err := hopsKey(t, cfg, tc.remote, "", "")
		if err != nil || key != tc.want {
			t.Errorf("key of %s = %q, %v; want %q", tc.remote, key, err, tc.want)
		}
	}
	// Without the field, the translator's clients share its /64, as before.
	plain, err := policy.ParseConfig([]byte(head), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if key, err := hopsKey(t, plain, "[2001:db8:64::808:801]:1234", "", ""); err != nil || key != "per-ip:2001:db8:64::/64" {
		t.Errorf("without nat64_prefixes: key %q, %v; want the /64", key, err)
	}
}

// TestConfigNAT64PrefixesErrors: a prefix keyfunc.NAT64Prefixes refuses is
// an error of the file at the entry, in the file's words.
func TestConfigNAT64PrefixesErrors(t *testing.T) {
	const head = "policies:\n  - {name: per-ip, limit: 10, window: 1m}\n"
	for _, tc := range []struct{ line, want string }{
		{"nat64_prefixes: [2001:db8:64::/80]", "nat64_prefixes[0]"},
		{"nat64_prefixes: [2001:db8:64::/80]", "32, 40, 48, 56, 64 or 96"},
		{"nat64_prefixes: [10.0.0.0/8]", "IPv6"},
		{"nat64_prefixes: [2001:db8:64::1/96]", "bits set past"},
		{"nat64_prefixes: [2001:db8:64::]", "prefix"},
		{"nat64_prefixes: [not-a-prefix]", "nat64_prefixes[0]"},
		{"nat64_prefixes: []", "empty"},
		{"nat64_prefixes: [2001:db8:64::/96, 2001:db8::/32]", "overlap"},
		{"nat64_prefixes: [64:ff9b::/64]", "64:ff9b::/96"},
	} {
		_, err := policy.ParseConfig([]byte(tc.line+"\n"+head), "t.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "t.yaml:1:") {
			t.Errorf("%s: error %v, want one at line 1 containing %q", tc.line, err, tc.want)
		}
	}
}

// TestConfigNAT64PrefixesOverlapNamesEntries: two overlapping entries are
// named by their places in the file, whatever else the list holds: with
// an entry that is no string before them, they were named by their
// places among the strings ("prefixes 0 and 1"), one off, and with an
// entry refused before them, not reported at all until that was fixed.
func TestConfigNAT64PrefixesOverlapNamesEntries(t *testing.T) {
	const head = "policies:\n  - {name: per-ip, limit: 10, window: 1m}\n"
	for _, tc := range []struct {
		line string
		want []string
	}{
		{"nat64_prefixes: [5, 2001:db8::/32, 2001:db8::/48]", []string{"nat64_prefixes[0]", "nat64_prefixes[2]", "nat64_prefixes[1]", "2001:db8::/32"}},
		{"nat64_prefixes: [2001:db8::/80, 2001:db8::/32, 2001:db8::/48]", []string{"nat64_prefixes[0]", "nat64_prefixes[2]", "nat64_prefixes[1]", "2001:db8::/32"}},
		{"nat64_prefixes: [2001:db8::/32, 2001:db8::/32]", []string{"nat64_prefixes[1]", "nat64_prefixes[0]"}},
	} {
		_, err := policy.ParseConfig([]byte(tc.line+"\n"+head), "t.yaml")
		if err == nil {
			t.Errorf("%s: no error", tc.line)
			continue
		}
		var overlap string
		for _, l := range strings.Split(err.Error(), "\n") {
			if strings.Contains(l, "overlap") {
				overlap += l
			}
		}
		for _, w := range tc.want[1:] {
			if !strings.Contains(overlap, w) {
				t.Errorf("%s: the overlap is reported as %q; want it to name %s", tc.line, overlap, w)
			}
		}
		if !strings.Contains(err.Error(), tc.want[0]) {
			t.Errorf("%s: error %v; want one at %s", tc.line, err, tc.want[0])
		}
	}
	// The well-known prefix, always recognised, may be listed (twice too).
	if _, err := policy.ParseConfig([]byte("nat64_prefixes: [64:ff9b::/96, 64:ff9b::/96, 2001:db8::/32]\n"+head), "t.yaml"); err != nil {
		t.Errorf("the well-known prefix listed twice: %v", err)
	}
}
