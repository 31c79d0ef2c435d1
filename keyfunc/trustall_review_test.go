package keyfunc_test

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/ratekeeper/ratekeeper/keyfunc"
)

// TestTrustAllErrorNamesEachFamily: IP's refusal of prefixes that trust a
// whole family is a *TrustAllError that names every family so trusted (both
// when both are) and the one prefix that does it alone, so that a caller
// (a configuration's decoder) can report it without parsing the message,
// and the message names each family too.
func TestTrustAllErrorNamesEachFamily(t *testing.T) {
	halves4 := prefixes("0.0.0.0/1", "128.0.0.0/1")
	halves6 := prefixes("::/1", "8000::/1")
	for _, tc := range []struct {
		name     string
		ps       []netip.Prefix
		families []string
		index    int
	}{
		{"IPv4 halves", halves4, []string{"IPv4"}, -1},
		{"IPv6 halves", halves6, []string{"IPv6"}, -1},
		{"both, IPv6 first", append(slices.Clone(halves6), halves4...), []string{"IPv4", "IPv6"}, -1},
		{"mapped halves", prefixes("::ffff:0.0.0.0/97", "::ffff:128.0.0.0/97", "10.0.0.0/8"), []string{"IPv4"}, -1},
		{"0.0.0.0/0 third", prefixes("10.0.0.0/8", "fd00::/8", "0.0.0.0/0"), []string{"IPv4"}, 2},
		{"::/0", prefixes("::/0"), []string{"IPv6"}, 0},
		{"::ffff:0:0/96 is IPv4", prefixes("10.0.0.0/8", "::ffff:0:0/96"), []string{"IPv4"}, 1},
	} {
		_, err := keyfunc.IP(keyfunc.TrustedProxies(tc.ps...))
		var te *keyfunc.TrustAllError
		if !errors.As(err, &te) {
			t.Errorf("%s: IP error = %v (%T); want a *TrustAllError", tc.name, err, err)
			continue
		}
		if !slices.Equal(te.Families, tc.families) || te.Index != tc.index {
			t.Errorf("%s: Families %q, Index %d; want %q, %d", tc.name, te.Families, te.Index, tc.families, tc.index)
		}
		if tc.index >= 0 && te.Prefix != tc.ps[tc.index] {
			t.Errorf("%s: Prefix %s; want %s, as given", tc.name, te.Prefix, tc.ps[tc.index])
		}
		for _, f := range tc.families {
			if !strings.Contains(err.Error(), "every "+f+" address") && tc.index < 0 {
				t.Errorf("%s: message %q does not say every %s address", tc.name, err, f)
			}
		}
	}
}

// TestNormalizePrefixAgreesWithTrustedProxies: a prefix normalized by
// NormalizePrefix holds exactly the peers TrustedProxies trusts with the
// prefix as given, compared as keyfunc compares them (unmapped, unzoned).
func TestNormalizePrefixAgreesWithTrustedProxies(t *testing.T) {
	peers := []string{"10.1.2.3:80", "[::ffff:10.1.2.3]:80", "192.0.2.1:80", "[fd00::1]:80", "[fd00::1%eth0]:80", "[::a01:203]:80", "[2001:db8::1]:80"}
	for _, s := range []string{"10.0.0.0/8", "10.1.2.3/8", "::ffff:10.0.0.0/104", "::ffff:10.1.2.3/104", "::ffff:0:0/80", "fd00::/8", "fd00::5/8", "::a00:0/104", "::ffff:10.1.2.3/128"} {
		p := netip.MustParsePrefix(s)
		np := keyfunc.NormalizePrefix(p)
		if np != np.Masked() {
			t.Errorf("NormalizePrefix(%s) = %s, not masked", s, np)
		}
		f, err := keyfunc.IP(keyfunc.TrustedProxies(p))
		if p != p.Masked() {
			// Bits past its length: refused (TestTrustedProxiesHostBitsRefused).
			if err == nil {
				t.Errorf("IP(TrustedProxies(%s)): no error, want its host bits refused", s)
			}
			continue
		}
		if err != nil {
			t.Fatalf("IP(TrustedProxies(%s)): %v", s, err)
		}
		for _, peer := range peers {
			r := newReq(peer, xff, "198.51.100.7")
			k, err := f(r)
			trusted := err == nil && k == "198.51.100.7"
			ap := netip.MustParseAddrPort(peer)
			if got := np.Contains(ap.Addr().Unmap().WithZone("")); got != trusted {
				t.Errorf("NormalizePrefix(%s) = %s holds %s: %v; TrustedProxies(%s) trusts it: %v (key %q, %v)", s, np, peer, got, s, trusted, k, err)
			}
		}
	}
	if got := keyfunc.NormalizePrefix(netip.Prefix{}); got.IsValid() {
		t.Errorf("NormalizePrefix(invalid) = %s; want it invalid", got)
	}
}

// TestNormalizePrefixTable: IPv4-mapped prefixes of /96 or longer become
// IPv4, shorter ones stay IPv6, every one is masked.
func TestNormalizePrefixTable(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"10.1.2.3/16", "10.1.0.0/16"},
		{"::ffff:10.1.0.0/112", "10.1.0.0/16"},
		{"::ffff:10.1.2.3/128", "10.1.2.3/32"},
		{"::ffff:0.0.0.0/96", "0.0.0.0/0"},
		{"::ffff:0:0/95", "::fffe:0:0/95"},
		{"2001:db8::1/64", "2001:db8::/64"},
	} {
		if got := keyfunc.NormalizePrefix(netip.MustParsePrefix(tc.in)).String(); got != tc.want {
			t.Errorf("NormalizePrefix(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
