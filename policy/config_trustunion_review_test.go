package policy_test

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/policy"
)

// complementEntries returns, as trusted_proxies entries, the prefixes that
// together hold every address of hole's family but those of hole: for each
// bit of hole's prefix, the sibling prefix differing from it in that bit.
func complementEntries(hole string) []string {
	h := netip.MustParsePrefix(hole).Masked()
	var out []string
	for i := 0; i < h.Bits(); i++ {
		b := h.Addr().AsSlice()
		b[i/8] ^= 0x80 >> (i % 8)
		sib, _ := netip.AddrFromSlice(b)
		out = append(out, netip.PrefixFrom(sib, i+1).Masked().String())
	}
	return out
}

// eights returns the 256 IPv4 /8 prefixes but those whose first byte is in
// skip, as trusted_proxies entries.
func eights(skip ...int) []string {
	var out []string
	for i := 0; i < 256; i++ {
		if !containsInt(skip, i) {
			out = append(out, fmt.Sprintf("%d.0.0.0/8", i))
		}
	}
	return out
}

func containsInt(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// flowList writes entries as a YAML flow sequence of quoted strings.
func flowList(entries []string) string {
	return `["` + strings.Join(entries, `", "`) + `"]`
}

func togetherReason(family string) string {
	return "the entries together hold every " + family + " address, so every " + family +
		" peer is trusted as a proxy and a client could name any other address; list the proxies' own prefixes, or count them with trusted_hops"
}

// TestConfigTrustedProxiesCoveringAFamilyTogether: trusted_proxies entries
// that together hold every address of a family (two halves, every /8, the
// IPv4-mapped halves, every IPv6 address but the mapped ones) were
// accepted entry by entry and then refused by keyfunc.IP, reported under
// ip_source (a field the file may not even set: no line, no column), in
// keyfunc's words (TrustedProxies, TrustedHops). They are refused at
// trusted_proxies, with its position, in the file's words, with the
// file's other problems, and only there.
func TestConfigTrustedProxiesCoveringAFamilyTogether(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	const badPol = "policies:\n  - name: a\n    limit: 0\n    window: 1s\n"
	for _, tc := range []struct {
		name, file, doc string
		want            []string
	}{
		{"two IPv4 halves", "f.yaml", "trusted_proxies: [0.0.0.0/1, 128.0.0.0/1]\n" + pol,
			[]string{"1:18 trusted_proxies: " + togetherReason("IPv4")}},
		{"halves and a real proxy, block list, ip_source set, other problems", "f.yaml",
			"ip_source: forwarded\ntrusted_proxies:\n  - 10.0.0.0/8\n  - 128.0.0.0/1\n  - 0.0.0.0/1\n" + badPol,
			[]string{
				"3:3 trusted_proxies: " + togetherReason("IPv4"),
				"8:12 policies[0].limit: must be positive, got 0",
			}},
		{"every /8", "f.yaml", "trusted_proxies: " + flowList(eights()) + "\n" + pol,
			[]string{"1:18 trusted_proxies: " + togetherReason("IPv4")}},
		{"IPv4-mapped halves", "f.yaml", `trusted_proxies: ["::ffff:0.0.0.0/97", "::ffff:128.0.0.0/97"]` + "\n" + pol,
			[]string{"1:18 trusted_proxies: " + togetherReason("IPv4")}},
		{"a mapped half and a plain one", "f.yaml", `trusted_proxies: ["::ffff:0.0.0.0/97", 128.0.0.0/1]` + "\n" + pol,
			[]string{"1:18 trusted_proxies: " + togetherReason("IPv4")}},
		{"two IPv6 halves and an IPv4 proxy", "f.yaml", `trusted_proxies: ["8000::/1", 10.0.0.0/8, "::/1"]` + "\n" + pol,
			[]string{"1:18 trusted_proxies: " + togetherReason("IPv6")}},
		{"every IPv6 address but the mapped ones", "f.yaml", "trusted_proxies: " + flowList(complementEntries("::ffff:0:0/96")) + "\n" + pol,
			[]string{"1:18 trusted_proxies: " + togetherReason("IPv6")}},
		{"both families", "f.yaml", `trusted_proxies: [0.0.0.0/1, "::/1", 128.0.0.0/1, "8000::/1"]` + "\n" + pol,
			[]string{
				"1:18 trusted_proxies: " + togetherReason("IPv4"),
				"1:18 trusted_proxies: " + togetherReason("IPv6"),
			}},
		{"with an entry refused alone", "f.yaml", "trusted_proxies: [0.0.0.0/1, proxy, 128.0.0.0/1]\n" + pol,
			[]string{
				"1:18 trusted_proxies: " + togetherReason("IPv4"),
				`1:30 trusted_proxies[1]: "proxy" is neither a CIDR prefix (10.0.0.0/8) nor an address`,
			}},
		{"json", "f.json", `{"trusted_proxies": ["0.0.0.0/1", "128.0.0.0/1"], "policies": [{"name": "a", "limit": 1, "window": "1s"}]}`,
			[]string{"1:21 trusted_proxies: " + togetherReason("IPv4")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := policy.ParseConfig([]byte(tc.doc), tc.file)
			if err == nil {
				t.Fatalf("ParseConfig = %d policies, trusting %v; want an error", len(cfg.Policies), cfg.TrustedProxies)
			}
			wantProblems(t, err, tc.want)
		})
	}
}

// TestConfigTrustedProxiesLeavingAGap: entries that leave at least one
// address of each family untrusted still load, however close they come.
func TestConfigTrustedProxiesLeavingAGap(t *testing.T) {
	const pol = "policies:\n  - name: a\n    limit: 1\n    window: 1s\n"
	for _, entries := range [][]string{
		eights(10),
		eights(255),
		complementEntries("10.1.2.3/32"),
		{"0.0.0.0/1", "::/1"},
		{"::ffff:0.0.0.0/97", "8000::/1"},
		complementEntries("::/128"),
		complementEntries("::1:0:0:0/128"),
	} {
		cfg, err := policy.ParseConfig([]byte("trusted_proxies: "+flowList(entries)+"\n"+pol), "f.yaml")
		if err != nil {
			t.Errorf("%d entries from %s: %v", len(entries), entries[0], err)
			continue
		}
		if len(cfg.TrustedProxies) != len(entries) {
			t.Errorf("%d entries from %s: TrustedProxies holds %d", len(entries), entries[0], len(cfg.TrustedProxies))
		}
	}
}
