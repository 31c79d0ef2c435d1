package middleware

import (
	"net/http/httptest"
	"net/netip"
	"testing"

	"github.com/ratekeeper/ratekeeper/algorithms"
	"github.com/ratekeeper/ratekeeper/policy"
)

// TestCheckForwardingTrustedCostsNoAllocation: with trusted proxies
// declared, a correct setup is never reported, so the check runs on every
// request for as long as the middleware serves: through a trusted proxy,
// from a public peer with a header, and without a header, it allocates
// nothing and stays on.
func TestCheckForwardingTrustedCostsNoAllocation(t *testing.T) {
	cfg, err := policy.ParseConfig([]byte("trusted_proxies: [10.1.0.0/16, 192.168.7.0/24]\npolicies:\n  - {name: per-ip, limit: 10, window: 1m}\n"), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	store, err := algorithms.NewMemoryStore()
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	m, err := FromConfig(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, remoteAddr, header string }{
		{"trusted proxy", "192.168.7.4:41000", "X-Forwarded-For"},
		{"trusted proxy, IPv4-mapped", "[::ffff:10.1.0.9]:41000", "X-Forwarded-For"},
		{"public peer", "198.51.100.9:41000", "X-Forwarded-For"},
		{"no header", "10.0.0.5:41000", ""},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.remoteAddr
		if tc.header != "" {
			r.Header.Set(tc.header, "198.51.100.7")
		}
		if got := testing.AllocsPerRun(100, func() { m.checkForwarding(r, m.set.Load(), 1) }); got != 0 {
			t.Errorf("%s: %v allocations per request, want 0", tc.name, got)
		}
		if got := m.fwd.Load(); got != fwdChecking {
			t.Errorf("%s: check state %d, want %d (checking)", tc.name, got, fwdChecking)
		}
	}
}

// TestProxyKind: the addresses only a proxy near the server has, and
// their edges.
func TestProxyKind(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"10.0.0.0", "private"},
		{"10.255.255.255", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.0.1", "private"},
		{"127.0.0.1", "loopback"},
		{"127.255.0.1", "loopback"},
		{"169.254.0.1", "link-local"},
		{"100.64.0.0", "shared (RFC 6598)"},
		{"100.127.255.255", "shared (RFC 6598)"},
		{"fc00::1", "unique local"},
		{"fdff::1", "unique local"},
		{"::1", "loopback"},
		{"fe80::1", "link-local"},
		{"172.32.0.1", ""},
		{"172.15.255.255", ""},
		{"100.63.255.255", ""},
		{"100.128.0.0", ""},
		{"11.0.0.1", ""},
		{"192.0.2.1", ""},
		{"0.0.0.0", ""},
		{"::", ""},
		{"224.0.0.1", ""},
		{"ff02::1", ""},
		{"fe00::1", ""},
		{"2001:db8::1", ""},
		{"64:ff9b::a00:1", ""},
	} {
		if got := proxyKind(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("proxyKind(%s) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}

// TestPrefixList: a report lists four trusted prefixes at most, and says
// how many more there are.
func TestPrefixList(t *testing.T) {
	var ps []netip.Prefix
	for _, s := range []string{"10.1.0.0/16", "10.2.0.0/16", "10.3.0.0/16", "10.4.0.0/16", "10.5.0.0/16", "10.6.0.0/16"} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	for n, want := range map[int]string{
		1: "10.1.0.0/16",
		4: "10.1.0.0/16, 10.2.0.0/16, 10.3.0.0/16, 10.4.0.0/16",
		5: "10.1.0.0/16, 10.2.0.0/16, 10.3.0.0/16, 10.4.0.0/16, and 1 more",
		6: "10.1.0.0/16, 10.2.0.0/16, 10.3.0.0/16, 10.4.0.0/16, and 2 more",
	} {
		if got := prefixList(ps[:n]); got != want {
			t.Errorf("prefixList(%d prefixes) = %q, want %q", n, got, want)
		}
	}
}
